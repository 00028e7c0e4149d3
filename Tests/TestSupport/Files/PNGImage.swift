import Foundation

/// Reads pixels of a PNG file (8-bit RGB or RGBA, not interlaced: what cairo writes), for
/// tests that check what a window showed. PNG decoding (zlib inflate, the five row
/// filters of the PNG specification §9) runs in the system's python3, whose standard
/// library has zlib; nothing of ours decodes it, so a wrong encoder cannot pass.
public enum PNGImage {
    /// The `(red, green, blue)` of the pixel at `x`, `y` of the PNG at `path`.
    public static func pixel(_ path: String, x: Int, y: Int) async throws -> (red: Int, green: Int, blue: Int) {
        let result = try await Subprocess.run("python3", ["-c", script, path, String(x), String(y)], gate: nil)
        let parts = result.output.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard result.status == 0, parts.count == 3 else {
            throw PNGError(description: "cannot read pixel \(x),\(y) of \(path): \(result.errorOutput)\(result.output)")
        }
        return (parts[0], parts[1], parts[2])
    }

    public struct PNGError: Error, CustomStringConvertible {
        public let description: String
    }

    private static let script = """
        import sys, zlib, struct
        path, px, py = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        data = open(path, 'rb').read()
        assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'not a PNG'
        pos, idat, width = 8, b'', 0
        while pos < len(data):
            length, kind = struct.unpack('>I4s', data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b'IHDR':
                width, height, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
                assert depth == 8 and ctype in (2, 6) and interlace == 0, 'unsupported PNG'
                bpp = 3 if ctype == 2 else 4
            elif kind == b'IDAT':
                idat += body
            pos += 12 + length
        raw, stride, prev = zlib.decompress(idat), width * bpp, bytearray(width * bpp)
        for row in range(py + 1):
            start = row * (stride + 1)
            ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                if ftype == 1: line[i] = (line[i] + a) & 255
                elif ftype == 2: line[i] = (line[i] + b) & 255
                elif ftype == 3: line[i] = (line[i] + (a + b) // 2) & 255
                elif ftype == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            prev = line
        o = px * bpp
        # cairo's ARGB32 is written as RGBA after un-premultiplying; opaque pixels are exact.
        print(prev[o], prev[o + 1], prev[o + 2])
        """
}
