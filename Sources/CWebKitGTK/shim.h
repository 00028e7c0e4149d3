#ifndef CLIENTCTL_CWEBKITGTK_SHIM_H
#define CLIENTCTL_CWEBKITGTK_SHIM_H

// WebKitGTK 4.1 (GTK 3) for the clientctl-shell target only: no other target links it.
#include <gtk/gtk.h>
#include <webkit2/webkit2.h>
#include <gio/gunixinputstream.h>
#include <glib-unix.h>
#include <cairo.h>

// Swift imports neither GObject's cast macros nor g_signal_connect (a macro): these are the
// few casts and connections the shell needs, as plain functions.
static inline gulong clientctl_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags)0);
}
static inline GtkWindow *clientctl_gtk_window(GtkWidget *w) { return GTK_WINDOW(w); }
static inline GtkContainer *clientctl_gtk_container(GtkWidget *w) { return GTK_CONTAINER(w); }
static inline GtkWidget *clientctl_gtk_widget(WebKitWebView *v) { return GTK_WIDGET(v); }
static inline WebKitWebView *clientctl_webkit_web_view(GtkWidget *w) { return WEBKIT_WEB_VIEW(w); }
static inline WebKitNavigationPolicyDecision *clientctl_navigation_decision(WebKitPolicyDecision *d) {
    return WEBKIT_NAVIGATION_POLICY_DECISION(d);
}
static inline WebKitResponsePolicyDecision *clientctl_response_decision(WebKitPolicyDecision *d) {
    return WEBKIT_RESPONSE_POLICY_DECISION(d);
}

// g_object_new with properties is variadic, which Swift cannot call: a web context whose
// storage and cache live in the given folders, and a view with a context and a content manager.
static inline WebKitWebContext *clientctl_web_context_new(const char *data_dir, const char *cache_dir) {
    WebKitWebsiteDataManager *data = WEBKIT_WEBSITE_DATA_MANAGER(g_object_new(WEBKIT_TYPE_WEBSITE_DATA_MANAGER,
        "base-data-directory", data_dir, "base-cache-directory", cache_dir, NULL));
    WebKitWebContext *context = webkit_web_context_new_with_website_data_manager(data);
    g_object_unref(data);
    return context;
}
static inline GtkWidget *clientctl_web_view_new(WebKitWebContext *context, WebKitUserContentManager *manager) {
    return GTK_WIDGET(g_object_new(WEBKIT_TYPE_WEB_VIEW, "web-context", context, "user-content-manager", manager, NULL));
}

// The app scheme's response pump (ResponsePump.swift): splice(2) and F_SETPIPE_SZ are GNU
// extensions the Glibc module does not import; called here through syscall(2) and fcntl(2).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
/// Moves up to `count` bytes of `file` at `*offset` into the pipe `pipe_fd` inside the kernel
/// (SPLICE_F_MOVE | SPLICE_F_NONBLOCK: never waits on a full pipe), advancing `*offset`.
static inline long clientctl_splice_to_pipe(int file, long long *offset, int pipe_fd, unsigned long count) {
    return syscall(SYS_splice, file, offset, pipe_fd, (long long *)NULL, (size_t)count, 1u | 2u);
}
/// pipe2(2): a pipe whose ends get `flags` (O_CLOEXEC, O_NONBLOCK) at once.
static inline int clientctl_pipe2(int *ends, int flags) { return (int)syscall(SYS_pipe2, ends, flags); }
/// Sets a pipe's capacity (F_SETPIPE_SZ); returns the capacity granted or -1.
static inline int clientctl_set_pipe_size(int pipe_fd, int bytes) { return fcntl(pipe_fd, 1031, bytes); }

// Dialogs a page can raise (PageDialogs.swift): GTK's dialog constructors are
// variadic, and the recent-files setting is a property set through variadic g_object_set.
static inline GtkWidget *clientctl_message_dialog_new(GtkWindow *parent, GtkMessageType type, GtkButtonsType buttons, const char *text) {
    return gtk_message_dialog_new(parent, (GtkDialogFlags)(GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT), type, buttons, "%s", text);
}
static inline GtkWidget *clientctl_file_chooser_dialog_new(GtkWindow *parent, const char *title) {
    return gtk_file_chooser_dialog_new(title, parent, GTK_FILE_CHOOSER_ACTION_OPEN, "_Cancel", GTK_RESPONSE_CANCEL, "_Open",
        GTK_RESPONSE_ACCEPT, NULL);
}
static inline GtkDialog *clientctl_gtk_dialog(GtkWidget *w) { return GTK_DIALOG(w); }
static inline GtkFileChooser *clientctl_gtk_file_chooser(GtkWidget *w) { return GTK_FILE_CHOOSER(w); }
static inline GtkBox *clientctl_gtk_box(GtkWidget *w) { return GTK_BOX(w); }
static inline GtkEntry *clientctl_gtk_entry(GtkWidget *w) { return GTK_ENTRY(w); }
static inline GtkBox *clientctl_message_dialog_area(GtkWidget *w) { return GTK_BOX(gtk_message_dialog_get_message_area(GTK_MESSAGE_DIALOG(w))); }
static inline void clientctl_disable_recent_files(void) {
    GtkSettings *settings = gtk_settings_get_default();
    if (settings) g_object_set(settings, "gtk-recent-files-enabled", FALSE, NULL);
}
static inline const char *clientctl_type_name(gpointer instance) { return G_OBJECT_TYPE_NAME(instance); }

#endif
