import ClientFoundation
import ClientUpdater
import SignedArchive

/// What `clientctl channel show|set` and `status` say of the channel a device follows.
enum ChannelText {
    /// `channel show`: the channel followed, then the choosable ones, one line each.
    static func show(_ c: ChannelMove.Choice) -> String {
        var lines = ["channel:   \(following(c))", "choosable: \(c.choosable.joined(separator: ", "))"]
        if let note = c.note { lines.append("note:      \(note)") }
        return lines.map { TerminalText.escaped($0) }.joined(separator: "\n")
    }

    /// `channel set`'s line on stderr.
    static func changed(_ before: ChannelMove.Choice, _ after: ChannelMove.Choice) -> String {
        if before.channel == after.channel, before.chosen == after.chosen {
            return "channel unchanged: \(following(after))"
        }
        return "channel: \(following(after)) (was: \(before.channel)); a running agent follows it from its next check"
    }

    /// `beta (chosen on this device; the root's own channel is stable)`, or `stable (the root's own channel)`.
    static func following(_ c: ChannelMove.Choice) -> String {
        c.channel == c.rootChannel
            ? "\(c.channel) (the trust root's own channel)"
            : "\(c.channel) (chosen on this device; the trust root's own channel is \(c.rootChannel))"
    }

    /// `status`'s `channel:` line.
    static func line(_ s: StatusReport) -> String {
        var text = s.channel ?? "-"
        if let root = s.rootChannel { text += " (chosen on this device; the trust root's own channel is \(root))" }
        if let choosable = s.choosableChannels { text += "; may follow \(choosable.joined(separator: ", "))" }
        if let note = s.channelChoice { text += "; \(note)" }
        return text
    }
}
