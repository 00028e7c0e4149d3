import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Library errors name request fields (`FieldProblem`), never flags; the command line says
/// its flags instead (`Output/FlagNames.swift`).
@Suite struct FlagNamesTests {
    @Test func theLibraryNamesFieldsAndTheCommandLineItsFlags() async throws {
        let error = UpdaterError.field("manifestURL", "refused: uses http: (use https:, or `allowInsecureHTTP`)")
        #expect(error.message == "`manifestURL` refused: uses http: (use https:, or `allowInsecureHTTP`)")
        #expect((error.underlying as? FieldProblem) == FieldProblem("manifestURL", "refused: uses http: (use https:, or `allowInsecureHTTP`)"))

        let tmp = try TemporaryDirectory("flags")
        let arguments = [
            "init", "--root", tmp("root"), "--app", "com.example.notes", "--channel", "stable",
            "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
        ]
        let http = try await ClientctlBinary.run(arguments + ["--manifest-url", "http://example.com/stable/manifest.json"])
        #expect(http.status == 64)
        #expect(
            http.errorOutput
                == "clientctl: --manifest-url refused: http://example.com/stable/manifest.json uses http: to a non-loopback host (use https:, or --allow-insecure-http)\n"
        )
        let ok = try await ClientctlBinary.run(arguments + ["--manifest-url", "https://example.com/stable/manifest.json"])
        #expect(ok.status == 0, "\(ok.errorOutput)")
        let again = try await ClientctlBinary.run(arguments + ["--manifest-url", "https://example.com/stable/manifest.json"])
        #expect(again.status == 73)
        #expect(again.errorOutput.hasSuffix("exists already: this root is initialized (--force overwrites its config)\n"), "\(again.errorOutput)")
    }
}
