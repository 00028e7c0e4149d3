import Foundation

extension String {
    /// This path made absolute against the current folder and standardized
    /// (`.`/`..` components resolved, no trailing `/`).
    package var absoluteStandardizedPath: String {
        let absolute = hasPrefix("/") ? self : FileManager.default.currentDirectoryPath + "/" + self
        return (absolute as NSString).standardizingPath
    }
}
