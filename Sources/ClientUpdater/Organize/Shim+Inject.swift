import ClientShim
import Foundation

extension Shim {
    /// `html` with the shim as the first element of `<head>` (a `<head>` is created when
    /// there is none). Already-shimmed documents are returned unchanged; everything
    /// outside the inserted bytes stays byte-identical.
    /// - Parameter version: the version the page belongs to (what the shim reports).
    package func inject(into html: Data, version: String? = nil) -> Data {
        HTMLHeadInjector.inject(Data(scriptElement(version: version).utf8), into: html, unlessContains: Data(Self.marker.utf8))
    }
}
