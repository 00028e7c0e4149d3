#ifndef CLIENTCTL_CARCHIVE_SHIM_H
#define CLIENTCTL_CARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <locale.h>

// Swift does not import the cast macros of archive_entry.h; re-export them.
static inline unsigned int clientctl_ae_ifreg(void) { return (unsigned int)AE_IFREG; }
static inline unsigned int clientctl_ae_ifdir(void) { return (unsigned int)AE_IFDIR; }
static inline unsigned int clientctl_ae_iflnk(void) { return (unsigned int)AE_IFLNK; }
static inline unsigned int clientctl_ae_ifchr(void) { return (unsigned int)AE_IFCHR; }
static inline unsigned int clientctl_ae_ifblk(void) { return (unsigned int)AE_IFBLK; }
static inline unsigned int clientctl_ae_ififo(void) { return (unsigned int)AE_IFIFO; }
static inline unsigned int clientctl_ae_ifsock(void) { return (unsigned int)AE_IFSOCK; }


// syncfs(2) is declared by <unistd.h> only under _GNU_SOURCE, which Swift's Glibc does not set.
extern int syncfs(int fd);
static inline int clientctl_syncfs(int fd) { return syncfs(fd); }

// libarchive converts entry names to the thread's LC_CTYPE charset, which is ASCII in the
// C locale Swift programs start in: pax and zip UTF-8 names then fail to convert. These let
// an extraction run with a UTF-8 LC_CTYPE on its own thread only (uselocale).
static inline void *clientctl_utf8_locale(void) {
    return (void *)newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}
static inline void *clientctl_use_locale(void *locale) { return (void *)uselocale((locale_t)locale); }
static inline void clientctl_free_locale(void *locale) { freelocale((locale_t)locale); }

#endif
