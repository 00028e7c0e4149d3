import Hummingbird
import LoopbackHTTP

/// Fetch Metadata request headers (https://www.w3.org/TR/fetch-metadata/): what kind of
/// request a browser makes.
enum HeaderName {
    /// `navigate` for a navigation.
    static let secFetchMode = HTTPFields.Element.Name.token("Sec-Fetch-Mode")
    /// `document` for a top-level document (`iframe` for a frame's).
    static let secFetchDest = HTTPFields.Element.Name.token("Sec-Fetch-Dest")
}
