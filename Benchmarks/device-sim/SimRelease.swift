import ArchivePublishing
import ClientFoundation
import DeviceIdentity
import DeviceTargeting
import Foundation
import ReleaseSigning
import SignedManifest

/// The release side, by the real release code: the publisher (staged rollouts, targets, short
/// expiries), the channel editor (pause, resume, pins, targets, revocations, cohort refreshes),
/// the restrictor (the rollout role's pause, percent cap and narrower target) and the cohort
/// lists. And the rules a device keeps about what it takes, judged from the signed documents
/// it was served.
extension SimRun {
    /// The targets releases and restrictions are drawn from: labels and a cohort.
    static let targets = ["site = a", "not site = b", "ring = beta or id in cohort pilots", "site = c or ring = beta"]

    var channelFolder: String { origin + "/stable" }

    /// Trust root 1 of the channel: the release key as root and release role, and a rollout
    /// role whose key signs restrictions. Devices that trust the release key walk to it.
    func writeTrustRoot() async throws {
        let release = options.key.publicKey
        var draft = RootDraft(
            app: Self.app, channel: "stable", expires: Self.wallOrigin.addingTimeInterval(2 * 365 * 86_400), rootKeys: [release],
            rootThreshold: 1, releaseKeys: [release], releaseThreshold: 1, rolloutKeys: [rolloutKey.publicKey])
        try await draft.sign(with: options.key)
        try FileManager.default.createDirectory(atPath: channelFolder + "/root", withIntermediateDirectories: true)
        try Data(try draft.root().jsonBytes()).write(to: URL(fileURLWithPath: channelFolder + "/root/1.json"))
    }

    /// Writes the cohort `pilots`: a draw of the devices.
    func setPilots() throws {
        let ids = devices.indices.filter { _ in events.chance(0.4) }
        let outcome = try ChannelCohorts.set(
            "pilots", ids: ids.map { devices[$0].id.text }.joined(separator: "\n"), source: "pilots", releases: origin, channel: "stable")
        cohortFiles[outcome.cohort.digest] = Set(ids.map { devices[$0].id.text })
        say("cohort pilots: devices \(ids.map(String.init).joined(separator: ","))")
    }

    /// What a publish of `version` carries beyond its files: drawn from the seed.
    func releaseTerms(_ request: inout PublishRequest) throws -> [String] {
        var said: [String] = []
        if events.chance(0.35) {
            let first = Double(10 + events.next() % 30)
            request.rollout = Rollout(
                start: wallNow,
                steps: [.init(seconds: 0, percent: first), .init(seconds: 4 * 3600, percent: 60), .init(seconds: 10 * 3600, percent: 100)])
            said.append("rolling out \(Int(first)) %, 60 % at 4 h, 100 % at 10 h")
        }
        if events.chance(0.25) {
            let text = Self.targets[Int(events.next() % UInt64(Self.targets.count))]
            request.target = try TargetExpression(parsing: text)
            said.append("for `\(text)`")
        }
        if events.chance(0.15) {
            let hours = 3 + Int(events.next() % 6)
            request.expires = wallNow.addingTimeInterval(Double(hours) * 3600)
            said.append("expiring in \(hours) h")
        }
        request.revoked = revoked.compactMap(Version.init).sorted()
        return said
    }

    /// One hour's release-side events besides publishing, each drawn from the seed; an edit
    /// the real code refuses is said, and changes nothing.
    func releaseEvents() async throws {
        func attempt(_ what: String, _ act: () async throws -> Void) async {
            do {
                try await act()
                say(what)
            } catch {
                say("\(what): refused: \(Self.short("\(error)"))")
            }
        }
        let signers: [any DocumentSigner] = [options.key]
        if events.chance(0.06) {
            var request = RestrictionRequest(release: newest)
            let kind = events.next() % 3
            switch kind {
            case 0: request.pause = true
            case 1: request.percent = Double(5 + events.next() % 50)
            default: request.target = try TargetExpression(parsing: Self.targets[Int(events.next() % 2)])
            }
            let what =
                kind == 0 ? "pause" : kind == 1 ? "cap at \(Int(request.percent ?? 0)) %" : "narrow to `\(request.target?.description ?? "")`"
            await attempt("restrict \(newest): \(what)") {
                try await ChannelRestrictor.restrict(request, releases: origin, channel: "stable", signers: [rolloutKey], now: wallNow)
            }
        }
        if FileManager.default.fileExists(atPath: channelFolder + "/restriction.json"), events.chance(0.08) {
            // What lifting does when nothing else is held back: the file goes, devices read its 404.
            try FileManager.default.removeItem(atPath: channelFolder + "/restriction.json")
            say("lift the restriction")
        }
        if let manifest = ChannelCohorts.currentManifest(channelFolder), manifest.rollout != nil, events.chance(0.06) {
            let pause = manifest.rollout?.paused != true
            await attempt(pause ? "rollout pause \(newest)" : "rollout resume \(newest)") {
                try await ChannelEditor.apply(pause ? .pause : .resume, releases: origin, channel: "stable", signers: signers, now: wallNow)
            }
        }
        if events.chance(0.04) {
            let older = trees.keys.compactMap(Version.init).filter { $0 < newest && !revoked.contains($0.description) }.sorted()
            if pinned == nil, !older.isEmpty {
                let version = older[Int(events.next() % UInt64(older.count))]
                let text = Self.targets[Int(events.next() % UInt64(Self.targets.count))]
                await attempt("pin `\(text)` to \(version)") {
                    try await ChannelEditor.apply(
                        .pin(try TargetExpression(parsing: text), version), releases: origin, channel: "stable", signers: signers, now: wallNow)
                    pinned = (text, version)
                }
            } else if pinned != nil {
                await attempt("unpin") {
                    try await ChannelEditor.apply(.unpin(nil), releases: origin, channel: "stable", signers: signers, now: wallNow)
                    pinned = nil
                }
            }
        }
        if events.chance(0.03) {
            let text = events.chance(0.3) ? nil : Self.targets[Int(events.next() % UInt64(Self.targets.count))]
            await attempt("target \(newest) " + (text.map { "to `\($0)`" } ?? "to every device")) {
                try await ChannelEditor.apply(
                    .setTarget(try text.map(TargetExpression.init(parsing:))), releases: origin, channel: "stable", signers: signers, now: wallNow)
            }
        }
        if events.chance(0.03) {
            try setPilots()
            await attempt("cohort refresh") {
                try await ChannelEditor.apply(.refreshCohorts, releases: origin, channel: "stable", signers: signers, now: wallNow)
            }
        }
        if events.chance(0.02),
            let old = trees.keys.compactMap(Version.init).filter({ $0 < newest && !revoked.contains($0.description) && $0 != pinned?.version }).min()
        {
            await attempt("revoke \(old)") {
                try await ChannelEditor.apply(.revoke([old]), releases: origin, channel: "stable", signers: signers, now: wallNow)
                revoked.insert(old.description)
            }
        }
    }

    /// At the quiet day: the staged rollout completes and the restriction goes, or not (a
    /// release some devices may not take stays so: liveness asks only those that may).
    func quietTerms() async {
        if let manifest = ChannelCohorts.currentManifest(channelFolder), manifest.rollout != nil, events.chance(0.5) {
            do {
                try await ChannelEditor.apply(.complete, releases: origin, channel: "stable", signers: [options.key], now: wallNow)
                say("rollout complete \(newest)")
            } catch {
                say("rollout complete \(newest): refused: \(Self.short("\(error)"))")
            }
        }
        if FileManager.default.fileExists(atPath: channelFolder + "/restriction.json"), events.chance(0.5) {
            try? FileManager.default.removeItem(atPath: channelFolder + "/restriction.json")
            say("lift the restriction")
        }
    }

    // MARK: the rules of what a device takes

    /// The signed documents one decision may rest on.
    struct Told {
        var manifest: Manifest
        var restriction: Restriction?
        /// The index's releases, for a pinned release.
        var index: [Manifest]
    }

    /// The verifier of the release key (the root's release role is that key alone).
    var verifier: ManifestVerifier { ManifestVerifier(trustedKeys: [options.key.publicKey]) }

    /// The verified manifest of `bytes` (each verified once: a run reads the same few again and again).
    func manifest(_ bytes: [UInt8]) -> Manifest? {
        if let known = parsed[bytes] { return known }
        let m = verifier.verify(bytes: bytes, source: "manifest").manifest
        parsed[bytes] = m
        return m
    }

    func restriction(_ bytes: [UInt8]?) -> Restriction? { bytes.flatMap { try? Restriction.parse($0, source: "restriction") } }

    func indexReleases(_ bytes: [UInt8]) -> [Manifest] {
        if let known = indexes[bytes] { return known }
        let releases = ((try? ReleaseIndex.parse(bytes))?.releases ?? []).compactMap { verifier.verify($0).manifest }
        indexes[bytes] = releases
        return releases
    }

    /// Why device `n` may not take `version` under `told` when its wall clock reads `wall`;
    /// nil when it may. Each fact is the signed document's own (the rollout's percent at the
    /// time, the place `Rollout.bucket` gives the device's id, the target's `admits`, the
    /// pins); the device's decision code is not asked.
    ///
    /// A restriction holds from its `issued` to its `expires` on the device's clock
    /// (docs/formats.md#restrictions); with `early`, also before its `issued` (what a device
    /// whose clock is behind would do if a halt held as soon as it is signed).
    func refusal(_ n: Int, _ version: Version, _ told: Told, wall: Date, early: Bool = false) -> String? {
        let device = devices[n]
        if device.heardRevoked.contains(version.description) { return "\(version) is revoked" }
        let manifest = told.manifest
        let target = TargetDevice(id: device.id, labels: device.labels)
        func inCohort(_ m: Manifest) -> (String) -> Bool {
            { name in
                guard let reference = m.cohorts.first(where: { $0.name == name }) else { return false }
                return self.cohortFiles[reference.digest]?.contains(device.id.text) ?? false
            }
        }
        func judge(_ m: Manifest, restriction: Restriction?) -> String? {
            if let expires = m.expires, expires <= wall { return "\(m.version)'s manifest expired at \(RFC3339Stamp.string(expires))" }
            let r = restriction.flatMap { $0.restricts(m) && ($0.issued <= wall || early) && $0.expires > wall ? $0 : nil }
            if m.revoked.contains(m.version) || (r?.revoked ?? []).contains(m.version) { return "\(m.version) is revoked" }
            if let t = m.target, !t.admits(target, inCohort: inCohort(m)) { return "\(m.version) is for `\(t)`" }
            if let t = r?.target, !t.admits(target, inCohort: inCohort(m)) { return "\(m.version) is restricted to `\(t)`" }
            if m.rollout?.paused == true || r?.paused == true { return "\(m.version) is paused" }
            let rollout = m.rollout ?? .percent(100)
            let percent = min(m.rollout?.percent(at: wall) ?? 100, r?.percent ?? 100)
            let place = Rollout.bucket(channel: m.channel, draw: rollout.drawName(version: m.version.description), deviceId: device.id.text)
            if !rollout.places(percent: percent).contains(place) { return "\(m.version) rolls out to \(percent) %, place \(place)" }
            return nil
        }
        let pin = ReleasePin.first(of: manifest.pins, admitting: target, inCohort: inCohort(manifest))
        if version == manifest.version {
            if let pin, pin.release.version < version { return "pinned to \(pin.release.version) by `\(pin.target)`" }
            return judge(manifest, restriction: told.restriction)
        }
        if let pin, version == pin.release.version, version < manifest.version {
            // A pinned release: its own manifest, as index.json holds it, without the restriction.
            guard let signed = told.index.first(where: { pin.release.names($0) }) else { return nil }
            return judge(signed, restriction: nil)
        }
        return "\(version) is not what release \(manifest.version) offers this device"
    }

    /// After a check that took `version` (installed or staged it): the documents it was served
    /// must let it. Judged at the wall-clock readings of the check's start and end (a jump in
    /// between makes either the device's time).
    func judgeTake(_ n: Int, _ version: Version, ledger: SimNetwork.Ledger, before: [UInt8]?, walls: [Date]) {
        let unchanged = ledger.manifestsUnchanged.compactMap { manifestsByETag[$0] }
        let manifests = (ledger.manifests + unchanged + (before.map { [$0] } ?? [])).compactMap(manifest)
        let index = ledger.indexes.flatMap(indexReleases)
        let held = restriction(devices[n].restriction)
        var why: [String] = []
        for m in manifests {
            for wall in walls {
                let told = Told(manifest: m, restriction: held, index: index)
                guard let no = refusal(n, version, told, wall: wall) else {
                    if let early = refusal(n, version, told, wall: wall, early: true) {
                        outcome.early += 1
                        say("device \(n) took \(version) under a restriction issued later than its clock reads: \(early)")
                    }
                    return
                }
                why.append(no)
            }
        }
        violation(
            "may-take",
            "device \(n) took \(version), which no document it was served lets it take: "
                + (why.isEmpty ? "no manifest" : Array(Set(why)).sorted().joined(separator: "; ")))
    }

    /// Whether device `n` may take the channel's release as the origin offers it now (its
    /// manifest and restriction) at every one of `walls`.
    func mayTakeNewest(_ n: Int, restriction bytes: [UInt8]?, walls: [Date]) -> Bool {
        guard let data = FileManager.default.contents(atPath: channelFolder + "/manifest.json"), let m = manifest([UInt8](data)) else {
            return false
        }
        let index = (FileManager.default.contents(atPath: channelFolder + "/index.json")).map { indexReleases([UInt8]($0)) } ?? []
        let told = Told(manifest: m, restriction: restriction(bytes), index: index)
        return walls.allSatisfy { refusal(n, m.version, told, wall: $0) == nil }
    }

    /// What device `n` was served in a check: its revocations heard, its restriction held
    /// and the newest manifest it was served.
    func learn(_ n: Int, _ ledger: SimNetwork.Ledger) {
        for bytes in ledger.manifests { manifestsByETag["\"\(bytes.count)-\(SimNetwork.fnv(bytes))\""] = bytes }
        for bytes in ledger.manifests {
            guard let m = manifest(bytes) else { continue }
            devices[n].heardRevoked.formUnion(m.revoked.map(\.description))
            // An older one is a replay the device refuses: it keeps deciding on the newest.
            if devices[n].lastManifest.flatMap(manifest).map({ $0.published <= m.published }) ?? true {
                devices[n].lastManifest = bytes
            }
        }
        for case .bytes(let bytes) in ledger.restrictions.map(\.answer) {
            restrictionsByETag["\"\(bytes.count)-\(SimNetwork.fnv(bytes))\""] = bytes
        }
        switch ledger.restrictions.last?.answer {
        case .bytes(let bytes): devices[n].restriction = bytes
        case .absent?: devices[n].restriction = nil
        // A `304` keeps the copy the request named, which after a kill may be older than the
        // newest the device was served (the killed check saved nothing).
        case .notModified(let tag?)?: if let kept = restrictionsByETag[tag] { devices[n].restriction = kept }
        case .notModified(nil)?, nil: break
        }
    }
}
