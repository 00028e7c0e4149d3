import ArchivePublishing
import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// A channel's release and restriction as RELEASES holds them now (`manifest.json`,
/// `restriction.json`, `root/N.json`): what the console shows and what an act starts from.
struct ChannelState: Sendable {
    /// The channel's folder name.
    let channel: String
    let manifest: Manifest
    /// The restriction in force for this manifest (signed by the rollout role, not expired).
    let restriction: Restriction?
    /// Why a `restriction.json` present is not in force (superseded, expired, refused).
    let restrictionNote: String?
    /// What `restriction.json` held when read (the basis an act is signed against).
    let basis: RestrictionBasis
    /// The newest trust root has a rollout role: devices obey restrictions.
    let hasRolloutRole: Bool
    let now: Date

    var app: String { manifest.app }
    var version: Version { manifest.version }

    /// The manifest's own percent now (100 without a rollout).
    var manifestPercent: Double { manifest.rollout?.percent(at: now) ?? 100 }

    /// The percent in force: the lower of the manifest's and the restriction's cap.
    var effectivePercent: Double { min(manifestPercent, restriction?.percent ?? 100) }

    /// Paused by the manifest or by the restriction in force.
    var paused: Bool { manifest.rollout?.paused == true || restriction?.paused == true }

    /// Halted by the rollout role (what `lift` takes away).
    var halted: Bool { restriction?.paused == true }

    /// One short line of the state, as the trail's before and after: `1.4.0 25 %`,
    /// `1.4.0 25 % halted until 2026-12-01T10:00:00Z`.
    var summary: String {
        var out = "\(version) \(Self.percent(effectivePercent)) %"
        if manifest.rollout?.paused == true { out += " paused by the release role" }
        if let restriction {
            var held: [String] = []
            if restriction.paused { held.append("halted") }
            if let p = restriction.percent { held.append("capped at \(Self.percent(p)) %") }
            if !restriction.revoked.isEmpty { held.append("revoked \(restriction.revoked.map(\.description).joined(separator: ","))") }
            if let target = restriction.target { held.append("only where \(target)") }
            if restriction.apply != nil { held.append("slower apply") }
            out += " " + held.joined(separator: ", ") + " until \(RFC3339.format(restriction.expires))"
        }
        return out
    }

    static func percent(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.2f", value)
    }

    /// The channels of `releases`: every folder holding a `manifest.json`, by name.
    static func channels(in releases: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: releases)) ?? []
        return names.filter { !$0.hasPrefix(".") && FileManager.default.fileExists(atPath: releases + "/" + $0 + "/manifest.json") }.sorted()
    }

    /// Whether `name` may be a channel folder's name (a path never leaves RELEASES).
    static func validName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.first != "."
            && name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) && $0.isASCII || "-_.".unicodeScalars.contains($0) }
    }

    /// Reads channel `channel` of `releases`.
    /// - Throws: ``OperatorConsoleError`` `.notFound` (no such channel), `.rejected` (a
    ///   manifest or root that does not parse).
    static func read(releases: String, channel: String, now: Date) throws -> ChannelState {
        guard validName(channel) else { throw OperatorConsoleError(.invalidArgument, "'\(channel)' is not a channel name") }
        let folder = releases + "/" + channel
        guard let data = FileManager.default.contents(atPath: folder + "/manifest.json") else {
            throw OperatorConsoleError(.notFound, "channel \(channel) has no manifest.json in \(releases)")
        }
        let manifest: Manifest
        let root: TrustRoot?
        do {
            let object = try StrictJSON.parseObject(data, limits: .manifest, source: folder + "/manifest.json")
            manifest = try Manifest.validate(object).mapError { $0.error(context: folder + "/manifest.json") }.get()
            root = try ReleaseRoots.newest(inChannelFolder: folder)
        } catch let error as any ClientctlError {
            throw OperatorConsoleError(.rejected, error.message)
        }
        let bytes = FileManager.default.contents(atPath: folder + "/restriction.json")
        var restriction: Restriction?
        var note: String?
        if let bytes {
            if let root {
                do {
                    switch try Restriction.check(bytes, for: manifest, root: root, now: now, source: "restriction.json") {
                    case .inForce(let r): restriction = r
                    case .ignored(let why): note = why
                    }
                } catch let error as SignedManifestError {
                    note = error.message
                }
            } else {
                note = "the channel has no trust root with a rollout role: devices ignore restriction.json"
            }
        }
        return ChannelState(
            channel: channel, manifest: manifest, restriction: restriction, restrictionNote: note, basis: RestrictionBasis(bytes),
            hasRolloutRole: root?.rollout != nil, now: now)
    }
}
