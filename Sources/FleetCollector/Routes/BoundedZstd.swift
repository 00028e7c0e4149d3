internal import CZstd

/// zstd decompression that never produces more than `limit` bytes nor keeps a window larger
/// than 2^`windowLogMax`: a small body that would inflate past the limit (a zstd bomb) is
/// stopped at the limit, before more memory is spent.
enum BoundedZstd {
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The output would exceed the limit.
        case tooLarge
        /// Not a complete zstd stream (the message says why).
        case corrupt(String)

        var description: String {
            switch self {
            case .tooLarge: return "too large"
            case .corrupt(let why): return why
            }
        }
    }

    /// The largest window a frame may ask for: 2 MiB, what zstd's levels 1–3 use when the
    /// size is not known in advance (a streamed body); batches are at most 256 KiB.
    static let windowLogMax: Int32 = 21

    static func decompress(_ input: [UInt8], limit: Int) throws -> [UInt8] {
        guard let dctx = ZSTD_createDCtx() else { throw Failure.corrupt("libzstd cannot allocate a decompression context") }
        defer { ZSTD_freeDCtx(dctx) }
        let set = ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, windowLogMax)
        if ZSTD_isError(set) != 0 { throw Failure.corrupt(String(cString: ZSTD_getErrorName(set))) }
        var output = [UInt8](repeating: 0, count: limit + 1)
        var produced = 0
        var last = 0
        try input.withUnsafeBytes { (inBytes: UnsafeRawBufferPointer) in
            var inBuf = ZSTD_inBuffer(src: inBytes.baseAddress, size: inBytes.count, pos: 0)
            try output.withUnsafeMutableBytes { (outBytes: UnsafeMutableRawBufferPointer) in
                while true {
                    var outBuf = ZSTD_outBuffer(dst: outBytes.baseAddress, size: outBytes.count, pos: produced)
                    last = ZSTD_decompressStream(dctx, &outBuf, &inBuf)
                    if ZSTD_isError(last) != 0 { throw Failure.corrupt(String(cString: ZSTD_getErrorName(last))) }
                    produced = outBuf.pos
                    if produced > limit { throw Failure.tooLarge }
                    // Done: the frame ended and every input byte was read.
                    if last == 0 && inBuf.pos == inBuf.size { return }
                    // No progress possible: input exhausted inside a frame.
                    if inBuf.pos == inBuf.size && outBuf.pos < outBuf.size { throw Failure.corrupt("the zstd stream ends inside a frame") }
                }
            }
        }
        output.removeSubrange(produced...)
        return output
    }
}
