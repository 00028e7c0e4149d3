import ClientFoundation
import Foundation

/// The app's icon, placed where the freedesktop icon theme spec looks for it: a square
/// PNG of a standard size under `hicolor/NxN/apps/`, or an SVG under `hicolor/scalable/apps/`.
package struct AppIcon: Sendable, Equatable {
    /// Largest icon file accepted.
    package static let maxBytes = 4 << 20
    /// The hicolor sizes a PNG icon may have.
    package static let sizes = [16, 22, 24, 32, 48, 64, 128, 256, 512]

    package let bytes: Data
    /// `48x48`, …, or `scalable`.
    package let folder: String
    /// `png` or `svg`.
    package let fileExtension: String

    /// Reads and checks the icon at `path`.
    /// - Throws: ``PackageError`` `.notFound` when it cannot be read, `.rejected` when it is
    ///   not a square PNG of a hicolor size or an SVG document.
    package static func load(_ path: String) throws -> AppIcon {
        guard let data = try BoundedFile.read(path, cap: maxBytes, code: PackageErrorCode.rejected) else {
            throw PackageError(.notFound, "--icon \(path): no such file")
        }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if data.count >= 24, Array(data.prefix(8)) == png, String(decoding: data[12..<16], as: UTF8.self) == "IHDR" {
            let width = data[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = data[20..<24].reduce(0) { $0 << 8 | Int($1) }
            guard width == height, sizes.contains(width) else {
                throw PackageError(
                    .rejected,
                    "--icon \(path) is \(width)x\(height): an app icon is a square PNG of \(sizes.map(String.init).joined(separator: ", ")) pixels (or an SVG)"
                )
            }
            return AppIcon(bytes: data, folder: "\(width)x\(width)", fileExtension: "png")
        }
        let head = String(decoding: data.prefix(4096), as: UTF8.self)
        if path.hasSuffix(".svg"), head.contains("<svg") {
            return AppIcon(bytes: data, folder: "scalable", fileExtension: "svg")
        }
        throw PackageError(.rejected, "--icon \(path) is neither a PNG nor an SVG document")
    }
}
