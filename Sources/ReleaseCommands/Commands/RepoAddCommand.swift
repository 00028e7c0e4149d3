import AppPackaging
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import StrictJSON

/// `clientctl repo add DEB… --repo DIR --suite NAME --gpg-key FILE`.
struct RepoAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add packaged apps to a suite of an apt repository and sign it.",
        discussion: """
            Adds each DEB (made by clientctl package: its X-Clientctl-Template field) to \
            --suite, replacing the version the suite held, then signs every suite again. \
            The same bytes again are `unchanged` (exit 0); a version the repository holds \
            with other bytes, or older than the suite's, is refused (exit 73), as are a \
            folder that holds files but is no repository of ours (73), a key that cannot \
            sign (65) and a .deb clientctl did not make (65). --phase starts each package \
            at that Phased-Update-Percentage (see repo phase); without it a package keeps \
            the suite's setting.

            Examples:
              clientctl repo add dist/notes_2.1.0_amd64.deb --repo apt --suite stable \\
                  --gpg-key keys/archive.asc
              clientctl repo add dist/notes_2.2.0~beta.1_amd64.deb --repo apt \\
                  --suite beta --gpg-key keys/archive.asc --valid-for 14
              clientctl repo add dist/notes_2.2.0_amd64.deb --repo apt --suite stable \
                  --gpg-key keys/archive.asc --phase 10
            """
    )

    @Argument(help: ArgumentHelp("The .deb files to add.", valueName: "DEB"))
    var debs: [String]
    @OptionGroup var options: RepoOptions
    @Option(
        name: .customLong("valid-for"),
        help: ArgumentHelp("Days each Release stays valid (Valid-Until); the repository's setting, else 7.", valueName: "DAYS"))
    var validFor: Int?
    @Option(help: ArgumentHelp("Origin and Label of the Releases; the repository's, else clientctl.", valueName: "TEXT"))
    var origin: String?
    @Option(
        help: ArgumentHelp(
            "Phased-Update-Percentage of each package in the suite: the share of machines apt upgrades (0 to 100).", valueName: "PERCENT"))
    var phase: Int?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !debs.isEmpty else { throw ValidationError("name at least one .deb to add") }
        if let validFor, !(1...3650).contains(validFor) { throw ValidationError("--valid-for must be 1 to 3650 days") }
        if let phase, !(0...100).contains(phase) { throw ValidationError("--phase must be 0 to 100 percent, not \(phase)") }
    }

    func run() async throws {
        try await runReportingErrors {
            let added = try AptRepository.add(
                debs: debs, repo: options.repo, suite: options.suite, keyFile: options.gpgKey,
                settings: AptRepository.Settings(origin: origin, validForDays: validFor), phase: phase)
            if output.json {
                let list: [JSONValue] = added.map { a in
                    .object([
                        "package": .string(a.package), "version": .string(a.version), "architecture": .string(a.architecture),
                        "replaced": a.replaced.map(JSONValue.string) ?? .null, "unchanged": .bool(a.unchanged),
                    ])
                }
                Console.out(Data(JSONPrettyPrinter.render(.object(["suite": .string(options.suite), "packages": .array(list)]))))
            } else {
                for a in added {
                    let what = "\(a.package) \(a.version) (\(a.architecture))"
                    if a.unchanged {
                        print("unchanged: suite \(options.suite) holds \(what) already")
                    } else {
                        print("added \(what) to suite \(options.suite)" + (a.replaced.map { ", replacing \($0)" } ?? ""))
                    }
                }
            }
        }
    }
}
