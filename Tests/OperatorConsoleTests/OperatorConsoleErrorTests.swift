import ClientFoundation
import Testing

@testable import OperatorConsole

/// The kinds of OperatorConsole's errors, which the command line turns into exit statuses.
@Suite struct OperatorConsoleErrorTests {
    @Test func codesMapToTheirKinds() {
        #expect(OperatorConsoleError(.invalidArgument, "x").kind == .usage)
        #expect(OperatorConsoleError(.notFound, "x").kind == .noInput)
        #expect(OperatorConsoleError(.rejected, "x").kind == .dataError)
        #expect(OperatorConsoleError(.io, "x").kind == .cannotCreate)
    }
}
