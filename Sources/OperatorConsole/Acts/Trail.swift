import AuditTrail
import ClientFoundation
import Foundation
import Logging
import ReleaseSigning

/// Appends to the audit trail (`--audit`), signed with the rollout key: every act, every
/// refused attempt, every login.
struct Trail: Sendable {
    let path: String
    let signers: @Sendable () throws -> [any DocumentSigner]
    let now: @Sendable () -> Date
    let logger: Logger

    /// Appends one record; returns nil, or why it could not be written (also logged).
    @discardableResult
    func record(
        operator name: String, address: String, act: String, target: String, before: String = "", after: String? = nil, result: String
    ) async -> String? {
        let record = AuditRecord(
            time: now(), operatorName: name, address: address, act: act, target: target, before: before, after: after ?? before,
            result: result)
        do {
            guard let signer = try signers().first else { return "no key to sign the audit trail" }
            _ = try await AuditTrail.append(record, to: path, signer: signer)
            return nil
        } catch let error as any ClientctlError {
            logger.error("audit trail \(path): \(error.message)")
            return "the audit trail could not be written: \(error.message)"
        } catch {
            logger.error("audit trail \(path): \(error)")
            return "the audit trail could not be written: \(error)"
        }
    }
}
