import Hummingbird

extension HTTPFields.Element.Name {
    /// A header name from a literal that is a valid HTTP token (checked once, at first use).
    static func token(_ literal: StaticString) -> HTTPFields.Element.Name {
        guard let name = HTTPFields.Element.Name(literal.description) else {
            preconditionFailure("\(literal) is not a valid HTTP header name")
        }
        return name
    }
}

/// Fetch Metadata request headers (https://www.w3.org/TR/fetch-metadata/): what kind of
/// request a browser makes.
enum HeaderName {
    /// `navigate` for a navigation.
    static let secFetchMode = HTTPFields.Element.Name.token("Sec-Fetch-Mode")
    /// `document` for a top-level document (`iframe` for a frame's).
    static let secFetchDest = HTTPFields.Element.Name.token("Sec-Fetch-Dest")
}
