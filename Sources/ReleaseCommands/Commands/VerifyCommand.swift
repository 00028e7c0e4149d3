import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SafeArchive
import SignedManifest
import StrictJSON

/// `clientctl verify MANIFEST --trust PUB.pem … [--archive FILE]`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a signed manifest (or index.json) against trusted public keys.",
        discussion: """
            Checks the manifest exactly as a device does: strict JSON, then the Ed25519 \
            signature over the RFC 8785 canonical bytes with the trusted key named by keyId, \
            then every field (format, SemVer versions, sha256, size, dates, url). With \
            --archive, also the archive's size and SHA-256.

            MANIFEST may also be an index.json: every release in it is verified and listed; \
            the exit status is 0 only if all are valid (--archive is not accepted then).

            Exit status: 0 valid, 65 invalid (the reason on stderr), 66 a file is missing, \
            64 bad usage.

            Examples:
              clientctl verify releases/stable/manifest.json \\
                  --trust keys/release.pub.pem
              clientctl verify manifest.json --trust old.pub.pem \\
                  --trust new.pub.pem --archive v1.4.0.tar.gz
              clientctl verify releases/stable/index.json \\
                  --trust keys/release.pub.pem --json
            """
    )

    @Argument(help: ArgumentHelp("The manifest.json or index.json to check.", valueName: "MANIFEST"))
    var manifest: String

    @Option(name: .long, help: ArgumentHelp("A trusted public key (PEM); repeat for several.", valueName: "PUB.pem"))
    var trust: [String] = []

    @Option(name: .long, help: ArgumentHelp("The archive to check against the manifest's size and sha256.", valueName: "FILE"))
    var archive: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !trust.isEmpty else { throw ValidationError("at least one --trust PUB.pem is required") }
    }

    func run() async throws {
        try await runReportingErrors {
            let verifier = ManifestVerifier(trustedKeys: try trust.map { try Ed25519.PublicKey(pemFile: $0) })
            let data = try ReleaseFiles.read(manifest, limit: StrictJSON.Limits.index.maxBytes)
            let object = try StrictJSON.parseObject(data, limits: .index, source: manifest)
            if object["format"]?.stringValue == ReleaseIndex.format {
                guard archive == nil else {
                    throw CommandError(.invalidArgument, "--archive applies to one manifest, not to an index")
                }
                try verifyIndex(try ReleaseIndex.parse(data, source: manifest), with: verifier)
                return
            }
            let status = verifier.verify(bytes: data, source: manifest)
            guard let verified = status.manifest else {
                if output.json { emit(rejectionJSON(status.rejection)) }
                throw (status.rejection ?? ManifestRejection(.invalidValue, field: nil, "invalid")).error(context: manifest)
            }
            var result = summary(verified)
            if let archive {
                let check = try ArchiveCheck.check(fileAt: archive, size: verified.size, sha256: verified.sha256)
                result["archive"] = .string(check == .matches ? "matches" : "mismatch")
                if let failure = check.failureMessage {
                    if output.json { emit(result) }
                    let code: CommandError.Code = if case .sizeMismatch = check { .sizeMismatch } else { .hashMismatch }
                    throw CommandError(code, "\(archive): \(failure)")
                }
            }
            if output.json {
                emit(result)
            } else {
                print("valid: \(verified.app) \(verified.channel) \(verified.version), signed by key \(verified.keyId)")
                if let archive { print("archive \(archive) matches: \(verified.size) bytes, sha256 \(verified.sha256)") }
            }
        }
    }

    func verifyIndex(_ index: ReleaseIndex, with verifier: ManifestVerifier) throws {
        let statuses = index.verify(with: verifier)
        var entries: [JSONValue] = []
        var firstFailure: ManifestRejection?
        for (k, status) in statuses.enumerated() {
            if let m = status.manifest {
                entries.append(.object(summary(m)))
                if !output.json { print("valid: \(m.app) \(m.channel) \(m.version), signed by key \(m.keyId)") }
            } else {
                let label = index.releases[k]["version"]?.stringValue ?? "releases[\(k)]"
                entries.append(.object(rejectionJSON(status.rejection, version: label)))
                if !output.json { print("INVALID: \(label): \(status.rejection?.message ?? "invalid")") }
                firstFailure = firstFailure ?? status.rejection.map { ManifestRejection($0.reason, field: $0.field, "\(label): \($0.message)") }
            }
        }
        if output.json { emit(["valid": .bool(firstFailure == nil), "releases": .array(entries)]) }
        if let firstFailure {
            let count = statuses.filter { $0.manifest == nil }.count
            throw firstFailure.error(context: "\(manifest): \(count) of \(statuses.count) releases invalid; first")
        }
    }

    func summary(_ m: Manifest) -> JSONObject {
        [
            "valid": .bool(true), "app": .string(m.app), "channel": .string(m.channel), "version": .string(m.version.description),
            "keyId": .string(m.keyId), "sha256": .string(m.sha256), "size": .integer(m.size), "url": .string(m.url),
        ]
    }

    func rejectionJSON(_ r: ManifestRejection?, version: String? = nil) -> JSONObject {
        var o: JSONObject = [
            "valid": .bool(false), "reason": .string(r?.reason.rawValue ?? "invalid"),
            "message": .string(r?.message ?? "invalid"),
        ]
        if let field = r?.field { o["field"] = .string(field) }
        if let version { o["version"] = .string(version) }
        return o
    }

    func emit(_ o: JSONObject) {
        Console.out(Data(JSONPrettyPrinter.render(.object(o))))
    }
}
