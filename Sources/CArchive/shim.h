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

#endif
