import AppPackaging
import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import StrictJSON

/// `clientctl repo push --repo DIR s3://BUCKET/PREFIX`: upload an apt repository.
struct RepoPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Upload an apt repository to S3-compatible storage, packages before indexes.",
        discussion: """
            Uploads the repository's pool/ and dists/ (never reprepro's conf/ or db/) below \
            s3://BUCKET/PREFIX/, in the order that keeps apt clients consistent: pool files \
            and by-hash indexes first, written only if absent (Cache-Control: public, \
            max-age=31536000, immutable); then the indexes at their plain names; last each \
            suite's Release, Release.gpg and InRelease (Cache-Control: public, \
            max-age=SECONDS), read back after writing. A client that reads the new InRelease \
            finds everything it names; nothing is deleted, so one that read the previous \
            InRelease does too. Pushing the same repository twice changes nothing.

            The push reads a hard-linked view of the repository taken under its lock, so a \
            `repo add` meanwhile is pushed next time, never half. A pool file or by-hash \
            index the store holds with other bytes is refused (exit 65) before any index is \
            written. Point the package's --apt-repo at the URL the bucket is served from. \
            Credentials, region and endpoint as for `clientctl push`.

            Examples:
              clientctl repo push --repo apt s3://downloads/apt
              clientctl repo push --repo apt s3://downloads/apt \\
                  --endpoint http://127.0.0.1:8333 --max-age 300
            """
    )

    @Option(help: ArgumentHelp("The repository folder.", valueName: "DIR"))
    var repo: String

    @Argument(help: ArgumentHelp("Where to: s3://BUCKET/PREFIX.", valueName: "S3-URL"))
    var destination: String

    @OptionGroup var store: S3StoreOptions

    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            var push = AptRepositoryPush(location: try S3Location.resolve(destination, endpoint: store.endpoint, region: store.region))
            push.indexMaxAge = store.maxAge
            let snapshot = try AptRepository.snapshot(repo: repo)
            defer { try? AtomicFile.removeTree(snapshot) }
            let report = try await push.push(folder: snapshot)
            if output.json {
                let value: JSONValue = .object([
                    "suites": .array(report.suites.map(JSONValue.string)), "uploaded": .array(report.uploaded.map(JSONValue.string)),
                    "unchanged": .array(report.unchanged.map(JSONValue.string)),
                ])
                Console.out(Data(JSONPrettyPrinter.render(value)))
            } else if report.uploaded.isEmpty {
                print("unchanged: \(destination) already holds \(report.suites.joined(separator: ", ")) as \(repo) has them")
            } else {
                print(
                    "pushed \(report.suites.joined(separator: ", ")) of \(repo) to \(destination): \(report.uploaded.count) file(s) uploaded, "
                        + "\(report.unchanged.count) already there")
            }
        }
    }
}
