#ifndef CLIENTCTL_CWEBKITGTK_SHIM_H
#define CLIENTCTL_CWEBKITGTK_SHIM_H

// WebKitGTK 4.1 (GTK 3) for the clientctl-shell target only: no other target links it.
#include <gtk/gtk.h>
#include <webkit2/webkit2.h>
#include <gio/gunixinputstream.h>
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
static inline gboolean clientctl_source_remove_false(void) { return G_SOURCE_REMOVE; }

#endif
