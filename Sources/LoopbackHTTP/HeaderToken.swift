import Hummingbird

extension HTTPFields.Element.Name {
    /// A header name from a literal that is a valid HTTP token (checked once, at first use).
    package static func token(_ literal: StaticString) -> HTTPFields.Element.Name {
        guard let name = HTTPFields.Element.Name(literal.description) else {
            preconditionFailure("\(literal) is not a valid HTTP header name")
        }
        return name
    }
}
