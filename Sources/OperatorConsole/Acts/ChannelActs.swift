import ArchivePublishing
import AuditTrail
import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// Halt, lift and cap: restrictions of a channel's current release signed with the rollout
/// key (docs/formats.md#restrictions), each made against the release and the
/// `restriction.json` the operator saw (a release or restriction changed meanwhile is
/// refused, not acted on blindly), then pushed where `--push` says.
struct ChannelActs: Sendable {
    let configuration: ConsoleConfiguration
    let now: @Sendable () -> Date

    /// What an act did: the state before and after (the trail's), and a push that failed.
    struct Done: Sendable {
        var before: String
        var after: String
        var pushProblem: String?
    }

    /// Pauses the release, keeping every other limit in force (cap, revocations, target,
    /// apply policy): what `rollout restrict --pause` signs, on top of what holds already.
    func halt(channel: String, version: Version, basis: RestrictionBasis) async throws -> Done {
        let state = try read(channel)
        guard !state.halted else {
            throw OperatorConsoleError(.invalidArgument, "release \(version) on channel \(channel) is halted already")
        }
        var request = keeping(state.restriction, release: version, basis: basis)
        request.pause = true
        return try await sign(request, channel: channel, before: state)
    }

    /// Lowers the rollout's percent below the one in force; never raises it.
    func cap(channel: String, version: Version, basis: RestrictionBasis, percent: Double) async throws -> Done {
        let state = try read(channel)
        guard percent.isFinite, percent >= 0, percent < state.effectivePercent else {
            throw OperatorConsoleError(
                .invalidArgument,
                "a cap must be below the \(ChannelState.percent(state.effectivePercent)) % in force and at least 0, not \(ChannelState.percent(percent))"
            )
        }
        var request = keeping(state.restriction, release: version, basis: basis)
        request.percent = percent
        return try await sign(request, channel: channel, before: state)
    }

    /// Takes the halt away (the rollout key alone): every other limit stays; with none left
    /// `restriction.json` goes (or, for a store it is pushed to, holds nothing).
    func lift(channel: String, version: Version, basis: RestrictionBasis, haltedBy: String) async throws -> Done {
        let state = try read(channel)
        let outcome: LiftOutcome
        do {
            outcome = try await ChannelRestrictor.lift(
                releases: configuration.releases, channel: channel, signers: try signers(), release: version, basis: basis,
                keepFile: configuration.push != nil, now: now()
            ).outcome
        } catch {
            throw Self.refusal(error)
        }
        let after = (try? read(channel).summary) ?? "\(version)"
        let how: String
        switch outcome {
        case .removed: how = "restriction.json removed"
        case .replaced: how = "the other limits kept"
        case .neutral: how = "restriction.json holds nothing more"
        }
        return Done(before: state.summary + " (halted by \(haltedBy))", after: after + " (\(how))", pushProblem: await push(channel))
    }

    /// A publishing error as the console's: what changed meanwhile or is not allowed is
    /// `.rejected` or `.invalidArgument` (the page says so, 409), a file that cannot be
    /// written `.io` (500).
    static func refusal(_ error: any Error) -> OperatorConsoleError {
        guard let error = error as? any ClientctlError else { return OperatorConsoleError(.io, "\(error)") }
        if let publishing = error as? ArchivePublishingError {
            switch publishing.code {
            case .contended, .busy: return OperatorConsoleError(.rejected, publishing.message, underlying: publishing)
            case .io: return OperatorConsoleError(.io, publishing.message, underlying: publishing)
            default: return OperatorConsoleError(.invalidArgument, publishing.message, underlying: publishing)
            }
        }
        if let own = error as? OperatorConsoleError { return own }
        return OperatorConsoleError(.io, error.message)
    }

    /// The rollout key's signers, made for this act.
    private func signers() throws -> [any DocumentSigner] {
        do {
            return try configuration.signers()
        } catch let error as any ClientctlError {
            throw OperatorConsoleError(.rejected, "the rollout key cannot be read: \(error.message)")
        } catch {
            throw OperatorConsoleError(.rejected, "the rollout key cannot be read: \(error)")
        }
    }

    private func read(_ channel: String) throws -> ChannelState {
        try ChannelState.read(releases: configuration.releases, channel: channel, now: now())
    }

    /// A request keeping every limit of `inForce`.
    private func keeping(_ inForce: Restriction?, release: Version, basis: RestrictionBasis) -> RestrictionRequest {
        var request = RestrictionRequest(
            pause: inForce?.paused ?? false, percent: inForce?.percent, revoke: inForce?.revoked ?? [], release: release)
        request.apply = inForce?.apply
        request.target = inForce?.target
        request.basis = basis
        return request
    }

    private func sign(_ request: RestrictionRequest, channel: String, before: ChannelState) async throws -> Done {
        do {
            try await ChannelRestrictor.restrict(
                request, releases: configuration.releases, channel: channel, signers: try signers(),
                now: Date(timeIntervalSince1970: floor(now().timeIntervalSince1970)))
        } catch {
            throw Self.refusal(error)
        }
        let after = (try? read(channel).summary) ?? "?"
        return Done(before: before.summary, after: after, pushProblem: await push(channel))
    }

    /// Pushes the channel where `--push` says; returns why it failed, if it did.
    private func push(_ channel: String) async -> String? {
        guard let push = configuration.push else { return nil }
        do {
            _ = try await push.push(folder: configuration.releases, channel: channel)
            return nil
        } catch let error as any ClientctlError {
            return "signed in RELEASES but not pushed: \(error.message)"
        } catch {
            return "signed in RELEASES but not pushed: \(error)"
        }
    }

    /// Who halted `version` of `channel`, as the trail says (the newest entry of the
    /// console's `halt`, `rollout restrict` or the guard's `guard-halt` that went through
    /// and left it halted), or what the restriction says when the trail does not know.
    static func haltAuthor(trail path: String, channel: String, version: Version, restriction: Restriction?) -> String {
        let target = "\(channel) \(version)"
        let entries = (try? AuditTrail.read(path)) ?? []
        if let entry = entries.last(where: {
            $0.record.target == target && $0.record.result == "ok" && $0.record.after.contains("halted")
                && ["halt", "rollout-restrict", "guard-halt"].contains($0.record.act)
        }) {
            return "\(entry.record.operatorName) (\(entry.record.act), trail entry \(entry.seq))"
        }
        let keys = restriction?.signatures.map(\.keyId).joined(separator: ", ") ?? "?"
        let issued = restriction.map { RFC3339.format($0.issued) } ?? "?"
        return "no one the trail names: the restriction was signed at \(issued) by rollout key \(keys)"
    }
}
