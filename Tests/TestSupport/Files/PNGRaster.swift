import Foundation

/// Every pixel of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's and cairo's
/// screenshots are), for tests that read where a chart's colours are. The decoding (zlib
/// inflate and the five row filters of the PNG specification §9) runs in the system's
/// python3 standard library (``PNGImage`` reads single pixels through it): nothing of ours decodes it.
public struct PNGRaster: Sendable {
    public let width: Int
    public let height: Int
    /// Rows top to bottom, three bytes (red, green, blue) per pixel.
    public let rgb: [UInt8]

    /// Decodes the PNG at `path`.
    public static func load(_ path: String) async throws -> PNGRaster {
        let out = path + ".rgb"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try await Subprocess.run("python3", ["-c", script, path, out], gate: nil, timeout: .seconds(120))
        let size = result.output.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard result.status == 0, size.count == 2, let data = FileManager.default.contents(atPath: out), data.count == size[0] * size[1] * 3
        else {
            throw PNGImage.PNGError(description: "cannot decode \(path): \(result.errorOutput)\(result.output)")
        }
        return PNGRaster(width: size[0], height: size[1], rgb: [UInt8](data))
    }

    /// The colour at `x`, `y` as `#rrggbb`.
    public func colour(x: Int, y: Int) -> String {
        let o = (y * width + x) * 3
        return String(format: "#%02x%02x%02x", rgb[o], rgb[o + 1], rgb[o + 2])
    }

    /// The longest vertical run of exactly `colour` (`#rrggbb`) in column `x`: its first and last row.
    public func longestRun(of colour: String, x: Int) -> ClosedRange<Int>? {
        guard let value = Int(colour.dropFirst(), radix: 16) else { return nil }
        let (r, g, b) = (UInt8(value >> 16 & 255), UInt8(value >> 8 & 255), UInt8(value & 255))
        var best: ClosedRange<Int>?
        var start: Int?
        for y in 0...height {
            let o = (y * width + x) * 3
            if y < height, rgb[o] == r, rgb[o + 1] == g, rgb[o + 2] == b {
                if start == nil { start = y }
            } else if let s = start {
                if (best.map { $0.count } ?? 0) < y - s { best = s...(y - 1) }
                start = nil
            }
        }
        return best
    }

    private static let script = """
        import sys, zlib, struct
        path, out = sys.argv[1], sys.argv[2]
        data = open(path, 'rb').read()
        assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'not a PNG'
        pos, idat = 8, b''
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
        rows = bytearray()
        for row in range(height):
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
            if bpp == 3:
                rows += line
            else:
                for i in range(0, stride, 4):
                    rows += line[i:i + 3]
        open(out, 'wb').write(rows)
        print(width, height)
        """
}
