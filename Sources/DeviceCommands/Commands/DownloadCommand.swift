import ArgumentParser

/// `clientctl download …`: the device owner's download policy of a root after `init`.
struct DownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Set or show when and over which links this device downloads releases.",
        discussion: """
            The download policy is kept in DIR/config.json (docs/download-policy.md): \
            download windows (local time, the grammar of --apply-window), a rate cap, and \
            what a metered link allows (never, patches:SIZE, always). A release found \
            outside what it allows is verified, nothing is downloaded, `status --explain` \
            says why and until when, and the device downloads at the first moment it may. \
            A running agent reads the new policy at its next check.

            Examples:
              clientctl download set --root /srv/kiosk --download-window 01:00-05:00
              clientctl download set --root /srv/kiosk --download-rate 2MB/s
              clientctl download set --root /srv/kiosk --metered patches:5MB
              clientctl download show --root /srv/kiosk --json
            """,
        subcommands: [DownloadSetCommand.self, DownloadShowCommand.self]
    )
}
