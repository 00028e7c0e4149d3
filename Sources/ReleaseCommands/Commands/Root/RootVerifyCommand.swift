import ArchivePublishing
import ArgumentParser
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl root verify CHANNEL-FOLDER`: walks root/1.json, root/2.json, … as a device would.
struct RootVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Walk a channel folder's roots as a device does and report each one.",
        discussion: """
            Root 1 must be signed by a threshold of its own root keys; every later root by \
            a threshold of the previous root's and of its own. Exits 65 at the first root a \
            device would refuse.

            Examples:
              clientctl root verify releases/stable
            """
    )

    @Argument(help: ArgumentHelp("The channel folder (OUT/CHANNEL).", valueName: "FOLDER")) var folder: String

    func run() async throws {
        try await runReportingErrors {
            guard let first = FileManager.default.contents(atPath: folder + "/root/1.json") else {
                throw CommandError(.notFound, "\(folder)/root/1.json does not exist: the channel publishes no trust root")
            }
            let source = folder + "/root/1.json"
            let one = try TrustRoot.parse(first, source: source)
            var trusted = try RootChain.verifyPinned(first, app: one.app, channel: one.channel, now: .distantPast, source: source).get()
            report(trusted)
            while let data = FileManager.default.contents(atPath: folder + "/root/\(trusted.version + 1).json") {
                trusted = try RootChain.verifyNext(data, after: trusted, source: folder + "/root/\(trusted.version + 1).json").get()
                report(trusted)
            }
            if let expired = RootChain.expiryProblem(trusted, now: Date(), source: "root \(trusted.version)") { throw expired }
        }
    }

    private func report(_ root: TrustRoot) {
        print(
            "root \(root.version): root keys \(root.root.keyIds.joined(separator: ", ")) (threshold \(root.root.threshold)); "
                + "release keys \(root.release.keyIds.joined(separator: ", ")) (threshold \(root.release.threshold)); "
                + (root.rollout.map { "rollout keys \($0.keyIds.joined(separator: ", ")) (threshold \($0.threshold)); " } ?? "")
                + (root.choosable.isEmpty ? "" : "devices may choose \(root.choosable.joined(separator: ", ")); ")
                + "signed by \(root.signatures.map(\.keyId).joined(separator: ", ")); expires \(root.expires.map(RFC3339.format) ?? "-")")
    }
}
