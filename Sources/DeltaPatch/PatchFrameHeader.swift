/// The header of a zstd frame, read from its first bytes without libzstd (RFC 8878
/// §3.1.1.1), so a patch's claims are checked before a decompression context or a window
/// is allocated.
package struct PatchFrameHeader: Sendable, Equatable {
    /// The window the decoder must keep (bytes): the largest back-reference distance.
    package var windowSize: UInt64
    /// The decompressed size the frame declares, when it declares one.
    package var contentSize: UInt64?
    /// A dictionary id (0 when none): publish never writes one.
    package var dictionaryID: UInt32
    /// True when the frame ends with a 32-bit checksum of its content.
    package var hasChecksum: Bool

    package init(windowSize: UInt64, contentSize: UInt64?, dictionaryID: UInt32, hasChecksum: Bool) {
        self.windowSize = windowSize
        self.contentSize = contentSize
        self.dictionaryID = dictionaryID
        self.hasChecksum = hasChecksum
    }

    /// The zstd frame magic number, little-endian `0xFD2FB528`.
    package static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

    /// Reads the header at the start of `bytes`; `nil` when it is not a complete zstd
    /// frame header (skippable frames and reserved bits included).
    package static func parse(_ bytes: some Collection<UInt8>) -> PatchFrameHeader? {
        let b = Array(bytes.prefix(18))
        guard b.count >= 6, Array(b[0..<4]) == magic else { return nil }
        let descriptor = b[4]
        let fcsFlag = Int(descriptor >> 6)
        let singleSegment = descriptor & 0x20 != 0
        guard descriptor & 0x08 == 0 else { return nil }  // reserved bit must be zero (§3.1.1.1.1.5)
        let hasChecksum = descriptor & 0x04 != 0
        let dictFlag = Int(descriptor & 0x03)
        var at = 5
        var windowSize: UInt64 = 0
        if !singleSegment {
            // Window_Descriptor (§3.1.1.1.2): exponent 5 bits, mantissa 3 bits.
            let wd = b[at]
            at += 1
            let windowLog = 10 + UInt64(wd >> 3)
            let base: UInt64 = 1 << windowLog
            windowSize = base + (base / 8) * UInt64(wd & 0x07)
        }
        let dictBytes = [0, 1, 2, 4][dictFlag]
        let fcsBytes = fcsFlag == 0 ? (singleSegment ? 1 : 0) : [0, 2, 4, 8][fcsFlag]
        guard b.count >= at + dictBytes + fcsBytes else { return nil }
        let dictionaryID = UInt32(truncatingIfNeeded: littleEndian(b[at..<(at + dictBytes)]))
        at += dictBytes
        var contentSize: UInt64?
        if fcsBytes > 0 {
            var value = littleEndian(b[at..<(at + fcsBytes)])
            if fcsBytes == 2 { value += 256 }  // §3.1.1.1.4: the 2-byte form is offset by 256
            contentSize = value
        }
        if singleSegment {
            guard let contentSize else { return nil }
            windowSize = contentSize
        }
        return PatchFrameHeader(windowSize: windowSize, contentSize: contentSize, dictionaryID: dictionaryID, hasChecksum: hasChecksum)
    }

    private static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
