import ArgumentParser
import CommandSupport
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// `clientctl root init FILE …`.
struct RootInitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write an unsigned root: root 1, or with --from the root after an existing one.",
        discussion: """
            Examples:
              clientctl root init root-1.json --app com.example.notes \\
                --channel stable --root-key a.pub.pem --root-threshold 1 \\
                --release-key r1.pub.pem --release-threshold 1 --expires 365d
              clientctl root init root-2.json --from releases/stable/root/1.json \\
                --expires 365d
              clientctl root init testers-root-1.json --app com.example.notes \\
                --channel stable --choosable beta --root-key a.pub.pem \\
                --release-key r1.pub.pem --expires 365d
            """
    )

    @Argument(help: ArgumentHelp("The root file to write.", valueName: "FILE"))
    var file: String
    @Option(help: ArgumentHelp("The root this one follows (version + 1, same keys unless given).", valueName: "ROOT.json"))
    var from: String?
    @Option(help: ArgumentHelp("Application id (root 1).", valueName: "ID")) var app: String?
    @Option(help: ArgumentHelp("Release channel (root 1).", valueName: "NAME")) var channel: String?
    @Option(name: .customLong("root-key"), help: ArgumentHelp("A public key of the root role; repeat.", valueName: "PUB.pem"))
    var rootKeys: [String] = []
    @Option(name: .customLong("root-threshold"), help: ArgumentHelp("How many root keys must sign a root.", valueName: "N"))
    var rootThreshold: Int?
    @Option(name: .customLong("release-key"), help: ArgumentHelp("A public key of the release role; repeat.", valueName: "PUB.pem"))
    var releaseKeys: [String] = []
    @Option(name: .customLong("release-threshold"), help: ArgumentHelp("How many release keys must sign a manifest.", valueName: "N"))
    var releaseThreshold: Int?
    @Option(
        name: .customLong("rollout-key"),
        help: ArgumentHelp("A public key of the rollout role (signs restrictions only); repeat.", valueName: "PUB.pem"))
    var rolloutKeys: [String] = []
    @Option(name: .customLong("rollout-threshold"), help: ArgumentHelp("How many rollout keys must sign a restriction.", valueName: "N"))
    var rolloutThreshold: Int?
    @Option(
        help: ArgumentHelp(
            "Another channel of the app its devices may choose to follow ('clientctl channel set'); repeat. With --from: replaces the list.",
            valueName: "CHANNEL"))
    var choosable: [String] = []
    @Option(help: ArgumentHelp("Expiry: RFC 3339 UTC time or Nd (days from now).", valueName: "RFC3339|Nd"))
    var expires: Expiry
    @Flag(help: "Overwrite FILE.") var force = false

    func validate() throws {
        if from == nil {
            guard app != nil, channel != nil, !rootKeys.isEmpty, !releaseKeys.isEmpty else {
                throw ValidationError("root 1 needs --app, --channel, --root-key and --release-key (or --from an earlier root)")
            }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            if FileManager.default.fileExists(atPath: file), !force {
                throw CommandError(.alreadyExists, "\(file) exists already (--force overwrites it)")
            }
            let expiry = try expires.date(now: Date())
            let rootPublic = try rootKeys.map { try Ed25519.PublicKey(pemFile: $0) }
            let releasePublic = try releaseKeys.map { try Ed25519.PublicKey(pemFile: $0) }
            let rolloutPublic = try rolloutKeys.map { try Ed25519.PublicKey(pemFile: $0) }
            var draft: RootDraft
            if let from {
                guard let data = FileManager.default.contents(atPath: from) else { throw CommandError(.notFound, "\(from) does not exist") }
                draft = RootDraft.successor(of: try TrustRoot.parse(data, source: from), expires: expiry)
                try replace(&draft, role: .root, with: rootPublic)
                try replace(&draft, role: .release, with: releasePublic)
                try replace(&draft, role: .rollout, with: rolloutPublic)
            } else {
                draft = RootDraft(
                    app: app ?? "", channel: channel ?? "", expires: expiry, rootKeys: rootPublic, rootThreshold: rootThreshold ?? 1,
                    releaseKeys: releasePublic, releaseThreshold: releaseThreshold ?? 1, rolloutKeys: rolloutPublic,
                    rolloutThreshold: rolloutThreshold ?? 1)
            }
            if let rootThreshold { try draft.setThreshold(rootThreshold, for: .root) }
            if let releaseThreshold { try draft.setThreshold(releaseThreshold, for: .release) }
            if let rolloutThreshold { try draft.setThreshold(rolloutThreshold, for: .rollout) }
            if !choosable.isEmpty { try draft.setChoosable(choosable) }
            try RootFile.write(draft, to: file, note: "unsigned")
        }
    }

    /// Replaces the keys of `role` by `keys` when any are given.
    private func replace(_ draft: inout RootDraft, role: RootDraft.Role, with keys: [Ed25519.PublicKey]) throws {
        guard !keys.isEmpty else { return }
        for key in keys { draft.addKey(key, to: role) }
        let keep = Set(keys.map(\.keyId))
        for id in draft.roles[role]?.keyIds ?? [] where !keep.contains(id) {
            try draft.setThreshold(min(draft.roles[role]?.threshold ?? 1, keys.count), for: role)
            try draft.removeKey(id, from: role)
        }
    }
}
