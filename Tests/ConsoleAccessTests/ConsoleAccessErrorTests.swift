import ClientFoundation
import Testing

@testable import ConsoleAccess

/// The kinds of ConsoleAccess's errors, which the command line turns into exit statuses.
@Suite struct ConsoleAccessErrorTests {
    @Test func codesMapToTheirKinds() {
        #expect(ConsoleAccessError(.invalidArgument, "x").kind == .usage)
        #expect(ConsoleAccessError(.notFound, "x").kind == .noInput)
        #expect(ConsoleAccessError(.rejected, "x").kind == .dataError)
        #expect(ConsoleAccessError(.io, "x").kind == .cannotCreate)
        #expect(ConsoleAccessError(.exists, "x").kind == .cannotCreate)
        #expect(ConsoleAccessError(.busy, "x").kind == .tempFail)
    }
}
