import Foundation

/// The paths of a device root (docs/device-layout.md#the-root). Folder names are built only from
/// validated values: a version becomes a path component only through these helpers.
public struct RootLayout: Sendable, Equatable {
    /// The root folder, absolute and standardized.
    public let root: String

    public init(root: String) {
        let absolute = root.hasPrefix("/") ? root : FileManager.default.currentDirectoryPath + "/" + root
        self.root = (absolute as NSString).standardizingPath
    }

    public var config: String { root + "/config.json" }
    public var state: String { root + "/state.json" }
    public var lock: String { root + "/lock" }
    /// A channel's own store folder, `<root>/<name>` (each channel names its own:
    /// `clients/` for signed archives, `meteor/` for Meteor hot code push).
    package func store(_ name: String) -> String { root + "/" + name }
    /// Organizer output: `serving/`.
    public var serving: String { root + "/serving" }

    /// `serving/<id>`; `nil` when the id is not a safe folder name.
    public func servingDirectory(_ id: String) -> String? {
        guard RootLayout.isSafeComponent(id) else { return nil }
        return serving + "/" + id
    }

    /// True when `name` can be used as one path component: printable ASCII letters,
    /// digits and `._-+`, not starting with `.`, at most 128 bytes.
    public static func isSafeComponent(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 128, name.first != "." else { return false }
        return name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x2E || c == 0x5F || c == 0x2D || c == 0x2B
        }
    }
}
