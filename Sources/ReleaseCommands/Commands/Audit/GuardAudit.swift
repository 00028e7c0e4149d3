import AuditTrail
import ClientFoundation
import FleetReports
import Foundation
import ReleaseSigning
import RolloutGuard
import SignedManifest
import Synchronization

/// `rollout guard --audit FILE`: each halt the guard signs appended to the trail, signed by
/// the rollout key it halts with (act `guard-halt`, before and after the channel's state).
///
/// A pass hands over to its `afterHalt` after a halt, new or already in force; a new one is
/// told by `restriction.json`: its bytes when the pass asked the fleet (which it does
/// before it decides) differ from those after. A restriction renewed before it runs out is
/// a halt signed again, and recorded as one.
final class GuardAudit: Sendable {
    private let recorder: @Sendable () throws -> AuditRecorder
    private let releases: String
    private let channel: String
    /// `restriction.json` and the channel's state when the pass asked the fleet.
    private let seen = Mutex<(restriction: Data?, state: String)?>(nil)

    /// With `--audit`, the guard's recorder; nil without. Checks the trail takes an entry.
    init?(_ options: AuditOptions, signing: SigningOptions, releases: String, channel: String) throws {
        guard let path = options.audit else { return nil }
        try AuditTrail.checkAppendable(path)
        let source = try SignerSource(try signing.signers()[0])
        let operatorName = options.operatorName
        recorder = { AuditRecorder(path: path, operatorName: operatorName, signer: try source.signer()) }
        self.releases = releases
        self.channel = channel
    }

    /// `fleet`, noting the channel's state whenever the pass asks it.
    func watching(_ fleet: any GuardFleet) -> any GuardFleet {
        WatchedFleet(base: fleet) { [self] in
            let restriction = FileManager.default.contents(atPath: releases + "/" + channel + "/restriction.json")
            let state = ChannelAuditState(releases: releases, channel: channel).text
            seen.withLock { $0 = (restriction, state) }
        }
    }

    /// `next` (a push, or nothing) after recording a new halt. Its line (the guard's line and
    /// `pushed` in its `--json`) says where the halt was recorded, then what `next` said.
    func afterHalt(then next: (@Sendable () async throws -> String)?) -> @Sendable () async throws -> String {
        { [self] in
            let recorded = try await record()
            let pushed = try await next?()
            return [recorded, pushed].compactMap { $0 }.joined(separator: "; ")
        }
    }

    private func record() async throws -> String {
        let now = ChannelAuditState(releases: releases, channel: channel)
        let restriction = FileManager.default.contents(atPath: releases + "/" + channel + "/restriction.json")
        guard let before = seen.withLock({ $0 }), before.restriction != restriction else { return "no new halt for the audit trail" }
        let recorder = try recorder()
        let seq = try await recorder.appendDone("guard-halt", target: now.target(channel), before: before.state, after: now.text)
        return "halt recorded in \(recorder.path) as entry \(seq)"
    }
}

/// A guard fleet that calls `asked` before each question.
private struct WatchedFleet: GuardFleet {
    let base: any GuardFleet
    let asked: @Sendable () -> Void

    func figures(_ query: GuardQuery) async throws -> GuardFigures {
        asked()
        return try await base.figures(query)
    }
}

/// A signer that can cross into a `@Sendable` closure: a command signer as it is, a key
/// file's key as its PEM (a private key is confined to one task), made again when asked.
private enum SignerSource: Sendable {
    case pem(String)
    case command(CommandSigner)

    init(_ signer: any DocumentSigner) throws {
        if let command = signer as? CommandSigner {
            self = .command(command)
        } else if let key = signer as? Ed25519.PrivateKey {
            self = .pem(try key.pemRepresentation())
        } else {
            throw CommandError(.invalidArgument, "--audit cannot sign with this kind of key")
        }
    }

    func signer() throws -> any DocumentSigner {
        switch self {
        case .pem(let pem): return try Ed25519.PrivateKey(pem: pem, source: "the rollout key")
        case .command(let command): return command
        }
    }
}
