#ifndef CLIENTCTL_CZSTD_SHIM_H
#define CLIENTCTL_CZSTD_SHIM_H

// Patch frames are made and read with a referenced prefix (ZSTD_CCtx_refPrefix /
// ZSTD_DCtx_refPrefix) and the streaming calls. Only the stable functions are called, and
// ZSTD_CCtx_getParameter (exported by libzstd since 1.4.0) to read settings back; two
// parameter ids come from the experimental section (their values have not changed since
// zstd 1.4.x) and are set through the stable ZSTD_CCtx_setParameter/ZSTD_DCtx_setParameter:
// stable buffers let compressor and decoder work in the caller's mapped files instead of
// copying input into, or decoding through, a window buffer of their own.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

/// The compressor reads the caller's input buffer in place (no internal window copy).
static inline ZSTD_cParameter clientctl_zstd_c_stableInBuffer(void) { return ZSTD_c_stableInBuffer; }

/// The decoder writes into, and reads back-references from, the caller's output buffer,
/// which must hold the whole frame: no window buffer is allocated.
static inline ZSTD_dParameter clientctl_zstd_d_stableOutBuffer(void) { return ZSTD_d_stableOutBuffer; }

/// True when a zstd result is the "destination buffer is too small" error.
static inline int clientctl_zstd_isDstTooSmall(size_t result) {
    return ZSTD_getErrorCode(result) == ZSTD_error_dstSize_tooSmall;
}

#endif
