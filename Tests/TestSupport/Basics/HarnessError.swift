/// A test harness could not do what a test asked (a fixture is missing, a server did not
/// answer, a tool failed): the test fails with this message.
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
