import ApplyPolicy
import Foundation
import Testing

/// An instant from an ISO 8601 UTC string, read with Foundation's own parser (independent of the module's reader).
func at(_ text: String) throws -> Date {
    try Date(text, strategy: .iso8601)
}

/// A window in stored form (`HH:MM-HH:MM@Zone`).
func window(_ encoded: String) throws -> MaintenanceWindow {
    try MaintenanceWindow(encoded: encoded)
}

/// Runs `body`, expects it to throw an ``ApplyPolicyError`` with `code` whose one-line message contains `naming`.
@discardableResult
func expectRefusal(
    _ code: ApplyPolicyError.Code,
    naming: String,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> ApplyPolicyError? {
    do {
        try body()
        Issue.record("expected ApplyPolicyError \(code) naming \(naming), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as ApplyPolicyError {
        #expect(error.code == code, "message: \(error.message)", sourceLocation: sourceLocation)
        #expect(error.message.contains(naming), "message: \(error.message)", sourceLocation: sourceLocation)
        #expect(!error.message.contains("\n"), sourceLocation: sourceLocation)
        #expect(error.description == error.message, sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected ApplyPolicyError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
