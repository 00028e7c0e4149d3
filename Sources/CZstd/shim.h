#ifndef CLIENTCTL_CZSTD_SHIM_H
#define CLIENTCTL_CZSTD_SHIM_H

// Only zstd's stable API: patch frames are made and read with a referenced prefix
// (ZSTD_CCtx_refPrefix / ZSTD_DCtx_refPrefix) and the streaming calls.
#include <zstd.h>

#endif
