import ArgumentParser

/// `clientctl manifest …`: tools for manifest files.
struct ManifestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "manifest",
        abstract: "Inspect signed manifests.",
        discussion: """
            Examples:
              clientctl manifest canonical releases/stable/manifest.json > signed-bytes
            """,
        subcommands: [ManifestCanonicalCommand.self]
    )
}
