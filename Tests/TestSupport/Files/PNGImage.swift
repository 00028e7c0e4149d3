import Foundation

/// Reads pixels of a PNG file (8-bit RGB or RGBA, not interlaced: what cairo writes), for
/// tests that check what a window showed. The decoding is ``PNGRaster``'s, in the system's
/// python3 standard library: nothing of ours decodes it, so a wrong encoder cannot pass.
public enum PNGImage {
    /// The `(red, green, blue)` of the pixel at `x`, `y` of the PNG at `path`.
    public static func pixel(_ path: String, x: Int, y: Int) async throws -> (red: Int, green: Int, blue: Int) {
        let raster = try await PNGRaster.load(path)
        guard (0..<raster.width).contains(x), (0..<raster.height).contains(y) else {
            throw PNGError(description: "pixel \(x),\(y) is outside \(path) (\(raster.width)×\(raster.height))")
        }
        let o = (y * raster.width + x) * 3
        return (Int(raster.rgb[o]), Int(raster.rgb[o + 1]), Int(raster.rgb[o + 2]))
    }

    public struct PNGError: Error, CustomStringConvertible {
        public let description: String
    }
}
