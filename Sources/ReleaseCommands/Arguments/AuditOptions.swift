import ArgumentParser
import AuditTrail
import ClientFoundation
import CommandSupport
import Foundation
import ReleaseSigning
import SignedManifest

/// `--audit FILE` and `--audit-operator NAME`: the act a command does, and a refused or
/// failed attempt at it, appended to the audit trail (docs/audit-trail.md), signed by the
/// key the command signs with.
struct AuditOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Append this act (or its failure) to the audit trail FILE, signed with the command's key.", valueName: "FILE"))
    var audit: String?

    @Option(name: .customLong("audit-operator"), help: ArgumentHelp("Who acts, as the audit trail names them (default: $USER).", valueName: "NAME"))
    var auditOperator: String?

    /// Who acts: `--audit-operator`, else `$USER`, else `unknown`.
    var operatorName: String {
        if let auditOperator, !auditOperator.isEmpty { return auditOperator }
        let user = ProcessInfo.processInfo.environment["USER"] ?? ""
        return user.isEmpty ? "unknown" : user
    }

    /// Where from: `cli@<hostname>`.
    static var address: String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "cli@unknown" }
        return "cli@" + String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The trail's appender for this command, or nil without `--audit`: checks now, before
    /// the act, that the trail takes an entry, so a broken trail refuses the act rather
    /// than leave it unrecorded.
    func recorder(signer: @autoclosure () throws -> any DocumentSigner) throws -> AuditRecorder? {
        guard let audit else { return nil }
        let signer = try signer()
        try AuditTrail.checkAppendable(audit)
        return AuditRecorder(path: audit, operatorName: operatorName, signer: signer)
    }

    /// Runs `body`, the act, and with `--audit` appends its entry: `ok` and the state after,
    /// or `refused:`/`failed:` and the error (then rethrown). `state` reads the short state
    /// `before` and `after` show.
    /// - Throws: what `body` throws; ``CommandError`` `io` when the act was done but its
    ///   entry could not be appended.
    func recording<T>(
        _ act: String, target: @autoclosure () -> String, signer: @autoclosure () throws -> any DocumentSigner, state: () -> String,
        _ body: () async throws -> T
    ) async throws -> T {
        guard let recorder = try recorder(signer: try signer()) else { return try await body() }
        let target = target()
        let before = state()
        let value: T
        do {
            value = try await body()
        } catch {
            await recorder.appendFailure(act, target: target, before: before, after: state(), error: error)
            throw error
        }
        try await recorder.appendDone(act, target: target, before: before, after: state())
        return value
    }

    /// `refused: …` for an act refused as not allowed or not asked right, `failed: …` else.
    static func result(of error: any Error) -> String {
        let kind = (error as? any ClientctlError)?.kind
        let refused = kind == .notPermitted || kind == .usage || kind == .config
        return (refused ? "refused: " : "failed: ") + message(error)
    }

    static func message(_ error: any Error) -> String {
        if let error = error as? any ClientctlError { return FlagNames.message(for: error) }
        return "\(error)"
    }
}

/// Appends a command's entries to the trail `--audit` names.
struct AuditRecorder {
    let path: String
    let operatorName: String
    let signer: any DocumentSigner

    /// Appends one entry now and returns its number.
    @discardableResult
    func append(_ act: String, target: String, before: String, after: String, result: String) async throws -> Int {
        let record = AuditRecord(
            time: Date(), operatorName: operatorName, address: AuditOptions.address, act: act, target: target, before: before, after: after,
            result: result)
        return try await AuditTrail.append(record, to: path, signer: signer).seq
    }

    /// Appends the act done (`ok`).
    /// - Throws: ``CommandError`` `io` when the entry could not be appended.
    @discardableResult
    func appendDone(_ act: String, target: String, before: String, after: String) async throws -> Int {
        do {
            return try await append(act, target: target, before: before, after: after, result: "ok")
        } catch {
            throw CommandError(.io, "\(act) \(target) was done, but not recorded in \(path): \(AuditOptions.message(error))")
        }
    }

    /// Appends the act refused or failed with `error`; when that cannot be appended either,
    /// says so on stderr (the act's own error is the one the command exits with).
    func appendFailure(_ act: String, target: String, before: String, after: String, error: any Error) async {
        do {
            try await append(act, target: target, before: before, after: after, result: AuditOptions.result(of: error))
        } catch let unrecorded {
            printError("clientctl: the attempt was not recorded in \(path): \(AuditOptions.message(unrecorded))")
        }
    }
}

/// `--audit-key KEY.pem`: the key that signs the audit entries of a command that signs
/// nothing else (`fleet admit`, `fleet reject`, `fleet forget` use a token).
struct AuditKeyOptions: ParsableArguments {
    @OptionGroup var trail: AuditOptions

    @Option(
        name: .customLong("audit-key"),
        help: ArgumentHelp("Ed25519 private key (PKCS#8 PEM) that signs the --audit entry.", valueName: "KEY.pem"))
    var auditKey: String?

    func validate() throws {
        if trail.audit != nil, auditKey == nil { throw ValidationError("--audit needs --audit-key KEY.pem: the key that signs its entries") }
        if trail.audit == nil, auditKey != nil { throw ValidationError("--audit-key goes with --audit FILE") }
    }

    /// The signer of `--audit-key`.
    func signer() throws -> any DocumentSigner {
        guard let auditKey else { throw CommandError(.invalidArgument, "--audit needs --audit-key KEY.pem") }
        return try Ed25519.PrivateKey(pemFile: auditKey)
    }
}
