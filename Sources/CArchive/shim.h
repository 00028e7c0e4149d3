#ifndef CLIENTCTL_CARCHIVE_SHIM_H
#define CLIENTCTL_CARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

// Swift does not import the cast macros of archive_entry.h; re-export them.
static inline unsigned int clientctl_ae_ifreg(void) { return (unsigned int)AE_IFREG; }
static inline unsigned int clientctl_ae_ifdir(void) { return (unsigned int)AE_IFDIR; }
static inline unsigned int clientctl_ae_iflnk(void) { return (unsigned int)AE_IFLNK; }
static inline unsigned int clientctl_ae_ifmt(void) { return (unsigned int)AE_IFMT; }
static inline unsigned int clientctl_ae_ifchr(void) { return (unsigned int)AE_IFCHR; }
static inline unsigned int clientctl_ae_ifblk(void) { return (unsigned int)AE_IFBLK; }
static inline unsigned int clientctl_ae_ififo(void) { return (unsigned int)AE_IFIFO; }
static inline unsigned int clientctl_ae_ifsock(void) { return (unsigned int)AE_IFSOCK; }


// syncfs(2) is declared by <unistd.h> only under _GNU_SOURCE, which Swift's Glibc does not set.
extern int syncfs(int fd);
static inline int clientctl_syncfs(int fd) { return syncfs(fd); }

#endif
