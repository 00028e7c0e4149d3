import ClientFoundation
import ClientShim
import ClientUpdater
import SignedArchive

/// The page's channel calls, `WebAppLocalServer.getChannel()` and `setChannel(name)`, for
/// every host: `serve`'s control routes (``AgentControl``) and the native shell's bridge
/// (docs/targeting.md#choosing-a-channel). The rule is `clientctl channel set`'s: a
/// channel the device's trust root does not list is refused and nothing is written.
package enum PageChannels {
    /// The channel the device follows and those it may choose, read on the ``BlockingExecutor``.
    /// - Throws: `SignedArchiveError` `.configInvalid` (kind `config`) for a root without
    ///   channels (Meteor); what reading the root's config and trust root throws.
    package static func read(_ layout: RootLayout) async throws -> ControlChannels {
        answer(try await BlockingExecutor.run { try ChannelMove.read(layout) })
    }

    /// Chooses channel `name` from the device's next check.
    /// - Throws: `SignedArchiveError` `.invalidArgument` (kind `usage`) for a name off the
    ///   rule, `.channelNotAllowed` (kind `notPermitted`) for a channel the trust root does
    ///   not list; `UpdaterError` `.locked` for a busy root.
    package static func set(_ name: String, layout: RootLayout) async throws -> ControlChannels {
        answer(try await ChannelMove.set(name, layout: layout).after)
    }

    private static func answer(_ choice: ChannelMove.Choice) -> ControlChannels {
        ControlChannels(channel: choice.channel, choosable: choice.choosable, rootChannel: choice.rootChannel, note: choice.note)
    }
}
