import ClientFoundation
import FleetReports
import Foundation
import Testing

@testable import ClientUpdater

/// `status --explain` (issue 43): a revocation by the rollout role's restriction is named a
/// revocation, not a rollout step; and no line carries a control character or bidi override
/// of the text it quotes to the terminal.
@Suite struct StatusExplanationTests {
    /// A status whose last check had `result` and `message`, decoded from the `--json`
    /// form so that the test needs no root.
    static func status(result: String, message: String) throws -> StatusReport {
        let check: [String: Any] = ["time": 0, "result": result, "message": message]
        let object: [String: Any] = [
            "root": "/var/lib/notes", "app": "com.example.notes", "channelKind": "archive", "channel": "stable",
            "shellVersion": "2.0.0", "current": "1.0.0", "selected": "1.0.0", "blacklist": [String](), "retry": [String](),
            "installed": [[String: Any]](), "lastCheck": check,
        ]
        return try JSONDecoder().decode(StatusReport.self, from: JSONSerialization.data(withJSONObject: object))
    }

    /// What ArchiveDecision.screen says when the rollout role's restriction revokes a held
    /// version: `skipped`, with the role's name in it.
    static let restrictionRevokes =
        "the rollout role's restriction of release 1.1.0 revokes 1.0.0: this device leaves it and never selects it again"

    @Test func aRestrictionsRevocationIsNamedRevokedNotRollout() throws {
        let lines = StatusExplanation.lines(try Self.status(result: "skipped", message: Self.restrictionRevokes), recent: [])
        #expect(lines == ["revoked: " + Self.restrictionRevokes], "\(lines)")
    }

    @Test func aRevocationByTheReleaseAndARolloutStepKeepTheirNames() throws {
        let byRelease = "release 1.1.0 revokes 1.0.0: this device leaves it and never selects it again"
        #expect(StatusExplanation.lines(try Self.status(result: "skipped", message: byRelease), recent: []) == ["revoked: " + byRelease])
        let paused = "the rollout of release 1.1.0 is paused by the rollout role's restriction until 2026-12-01T00:00:00Z; this device waits"
        #expect(StatusExplanation.lines(try Self.status(result: "skipped", message: paused), recent: []) == ["rollout: " + paused])
        let step = "release 1.1.0 is rolling out to 10 % of devices; this device (place 4711 of 10000) waits"
        #expect(StatusExplanation.lines(try Self.status(result: "skipped", message: step), recent: []) == ["rollout: " + step])
        let blacklisted = "release 1.1.0 is blacklisted on this device (it is revoked)"
        let lines = StatusExplanation.lines(try Self.status(result: "skipped", message: blacklisted), recent: [])
        #expect(!lines.contains { $0.hasPrefix("revoked:") || $0.hasPrefix("rollout:") }, "the blacklist lines say it: \(lines)")
    }

    /// The scalars a hostile server's text may carry: ESC [ 2 J (clear the screen), BEL, the
    /// C1 CSI and RIGHT-TO-LEFT OVERRIDE.
    static let hostile: [Unicode.Scalar] = ["\u{1b}", "\u{07}", "\u{9b}", "\u{202e}"]

    @Test func noLineCarriesAControlOrBidiCharacter() throws {
        let message = "GET https://cdn.example.com/manifest.json: HTTP 500 \u{1b}[2J\u{07} \u{9b}31m \u{202e}txt.exe"
        let lines = StatusExplanation.lines(try Self.status(result: "failed", message: message), recent: [])
        #expect(lines.count == 1)
        for line in lines {
            #expect(!line.unicodeScalars.contains { Self.hostile.contains($0) || TerminalText.isControl($0) }, "\(line.debugDescription)")
        }
        #expect(lines.first?.contains("\\u{1b}[2J\\u{7} \\u{9b}31m \\u{202e}txt.exe") == true, "\(lines)")
    }
}

/// The shared sanitizer of text from elsewhere (ClientFoundation's `TerminalText`).
@Suite struct TerminalTextTests {
    @Test func everyControlAndBidiScalarIsEscapedAndNothingElse() {
        var controls: [UInt32] = Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F)
        controls += [0x061C, 0x200E, 0x200F] + Array(0x202A...0x202E) + Array(0x2066...0x2069)
        for value in controls {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a" + String(Character(scalar)) + "b"
            #expect(TerminalText.escaped(text) == "a\\u{\(String(value, radix: 16))}b", "U+\(String(value, radix: 16))")
        }
        let kept = "1.0.0 · Überprüfung 日本語 עברית 🙂 \\ \" ' \u{A0}\u{200B}"
        #expect(TerminalText.escaped(kept) == kept)
        #expect(TerminalText.escaped("a\tb\nc", keeping: ["\n"]) == "a\\u{9}b\nc")
    }
}
