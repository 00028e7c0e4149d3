import ArgumentParser

/// `clientctl channel …`: the channel a device follows, among those its trust root allows.
struct ChannelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel",
        abstract: "Show or choose the channel this device follows, among those its trust root allows.",
        discussion: """
            A device follows its trust root's own channel unless another is chosen here (or \
            by its page's WebAppLocalServer.setChannel, for testers). The root says which \
            channels a device may choose (root init --choosable); every manifest of a chosen \
            channel is verified with the same root, as ever. The choice is kept in \
            DIR/config.json across restarts and upgrades; a running agent follows it from \
            its next check (docs/targeting.md#choosing-a-channel).

            Examples:
              clientctl channel show --root /var/lib/kiosk
              clientctl channel set --root /var/lib/kiosk beta
              clientctl channel set --root /var/lib/kiosk stable
            """,
        subcommands: [ChannelShowCommand.self, ChannelSetCommand.self]
    )
}
