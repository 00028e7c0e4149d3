import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl manifest canonical MANIFEST`: the exact bytes a manifest's signature covers.
struct ManifestCanonicalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "canonical",
        abstract: "Print the exact bytes a manifest's signature covers.",
        discussion: """
            Prints the RFC 8785 (JCS) canonical JSON of the manifest object without its \
            `signature` member to stdout, with no trailing newline. The manifest is parsed \
            strictly (duplicate keys, trailing data, deep nesting and invalid UTF-8 are refused \
            with exit 65); its signature is not checked. Use it to verify or sign a release \
            with other tools.

            Examples:
              clientctl manifest canonical releases/stable/manifest.json \\
                  > signed-bytes
              openssl pkeyutl -verify -pubin -inkey release.pub.pem -rawin \\
                  -in signed-bytes -sigfile sig.bin
              clientctl manifest canonical - < manifest.json
            """
    )

    @Argument(help: ArgumentHelp("The manifest file, or - for stdin.", valueName: "MANIFEST"))
    var manifest: String

    func run() async throws {
        try await runReportingErrors {
            let data = try ReleaseFiles.read(manifest, limit: StrictJSON.Limits.manifest.maxBytes)
            let object = try StrictJSON.parseObject(data, limits: .manifest, source: manifest)
            Console.out(Data(Manifest.signedBytes(of: object)))
        }
    }
}
