import Foundation

/// A fresh folder under the system temp dir, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked: `path` is immutable; deinit runs once.
    public let path: String

    public init(_ label: String = "clientctl") throws {
        let template = NSTemporaryDirectory() + "/\(label)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: template])
        }
        path = (String(cString: made) as NSString).standardizingPath
    }

    /// `path/relative`.
    public func callAsFunction(_ relative: String) -> String { path + "/" + relative }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
