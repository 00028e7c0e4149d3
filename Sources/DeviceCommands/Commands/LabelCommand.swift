import ArgumentParser

/// `clientctl label …`: the device owner's labels of a root after `init`.
struct LabelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "label",
        abstract: "Set, unset or list this device's labels, which release targets read.",
        discussion: """
            Labels are KEY=VALUE pairs kept in DIR/config.json (docs/targeting.md): a \
            release published with --target 'store in (12, 14)' goes only to devices whose \
            labels it admits, and the device decides that itself; the labels go in its \
            signed fleet reports, never to the release host. A running agent reads them at \
            its next check.

            Examples:
              clientctl label set --root /var/lib/kiosk store=12 ring=beta
              clientctl label unset --root /var/lib/kiosk ring
              clientctl label list --root /var/lib/kiosk --json
            """,
        subcommands: [LabelSetCommand.self, LabelUnsetCommand.self, LabelListCommand.self]
    )
}
