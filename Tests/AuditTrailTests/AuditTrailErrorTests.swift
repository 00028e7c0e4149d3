import ClientFoundation
import Testing

@testable import AuditTrail

/// The kinds of AuditTrail's errors, which the command line turns into exit statuses.
@Suite struct AuditTrailErrorTests {
    @Test func codesMapToTheirKinds() {
        #expect(AuditTrailError(.invalidArgument, "x").kind == .usage)
        #expect(AuditTrailError(.notFound, "x").kind == .noInput)
        #expect(AuditTrailError(.rejected, "x").kind == .dataError)
        #expect(AuditTrailError(.io, "x").kind == .cannotCreate)
    }
}
