import ApplyPolicy
import Foundation
import Testing

/// Expected instants in UTC. Europe/Berlin: CET +01, CEST +02; 2026 switches at 01:00Z on
/// 03-29 (spring forward) and 10-25 (fall back).
@Suite("Download policy")
struct DownloadPolicyTests {
    func policy(_ windows: [String], metered: MeteredAllowance = .always) throws -> DownloadPolicy {
        DownloadPolicy(windows: try windows.map(window), metered: metered)
    }

    func deferral(_ verdict: DownloadVerdict, sourceLocation: SourceLocation = #_sourceLocation) -> DownloadDeferral? {
        guard case .deferred(let deferral) = verdict else {
            Issue.record("expected a deferral, got \(verdict)", sourceLocation: sourceLocation)
            return nil
        }
        return deferral
    }

    @Test("no settings: every download at once, over every link")
    func unrestricted() throws {
        let policy = DownloadPolicy()
        #expect(policy.isUnrestricted)
        #expect(policy.decide(DownloadRequest(now: try at("2026-06-10T12:00:00Z"), metered: true, size: 200_000_000)) == .allowed(note: nil))
    }

    @Test("a window across midnight: inside late and early, the next opening outside")
    func acrossMidnight() throws {
        let night = try policy(["22:00-06:00@UTC"])
        #expect(night.decide(DownloadRequest(now: try at("2026-06-10T23:30:00Z"), size: 10)) == .allowed(note: nil))
        #expect(night.decide(DownloadRequest(now: try at("2026-06-11T05:59:59Z"), size: 10)) == .allowed(note: nil))
        let noon = deferral(night.decide(DownloadRequest(now: try at("2026-06-11T06:00:00Z"), size: 10)))
        #expect(noon?.reason == .window)
        #expect(noon?.reasons == [.window])
        #expect(noon?.until == (try at("2026-06-11T22:00:00Z")))
        #expect(noon?.description.contains("outside the download windows (22:00–06:00 UTC)") == true)
        #expect(noon?.description.contains("may download from 2026-06-11T22:00:00Z") == true)
    }

    @Test("across DST in Europe/Berlin: the night the clock springs forward and falls back")
    func acrossDST() throws {
        let berlin = try policy(["23:00-03:00@Europe/Berlin"])
        // 2026-03-28 23:00 CET is 22:00Z; 03:00 CEST on the 29th is 01:00Z, then 23:00 CEST is 21:00Z.
        #expect(deferral(berlin.decide(DownloadRequest(now: try at("2026-03-28T21:59:59Z"), size: 1)))?.until == (try at("2026-03-28T22:00:00Z")))
        #expect(berlin.decide(DownloadRequest(now: try at("2026-03-29T00:59:59Z"), size: 1)) == .allowed(note: nil))
        #expect(deferral(berlin.decide(DownloadRequest(now: try at("2026-03-29T01:00:00Z"), size: 1)))?.until == (try at("2026-03-29T21:00:00Z")))
        // Falling back: 23:00 CEST on 10-24 is 21:00Z, 03:00 CET on the 25th is 02:00Z: five hours.
        #expect(berlin.decide(DownloadRequest(now: try at("2026-10-25T01:59:59Z"), size: 1)) == .allowed(note: nil))
        #expect(deferral(berlin.decide(DownloadRequest(now: try at("2026-10-25T02:00:00Z"), size: 1)))?.until == (try at("2026-10-25T22:00:00Z")))
        // A window in the hour that does not exist on 03-29 opens the next night.
        let skipped = try policy(["02:15-02:45@Europe/Berlin"])
        #expect(deferral(skipped.decide(DownloadRequest(now: try at("2026-03-28T23:00:00Z"), size: 1)))?.until == (try at("2026-03-30T00:15:00Z")))
    }

    @Test("a zone named per window; a window without one reads in the zone given")
    func zonePerWindow() throws {
        let two = try DownloadPolicy(
            windows: ["02:00-03:00@America/New_York", "02:00-03:00"], zone: "Asia/Tokyo", defaultZone: #require(TimeZone(identifier: "UTC")),
            rate: "2MB/s", metered: nil)
        #expect(two.windows.map(\.encoded) == ["02:00-03:00@America/New_York", "02:00-03:00@Asia/Tokyo"])
        #expect(two.rate?.bytesPerSecond == 2_000_000)
        #expect(two.metered == .always)
        // Tokyo's 02:00 on 06-11 is 17:00Z on 06-10; New York's 02:00 EDT is 06:00Z.
        #expect(deferral(two.decide(DownloadRequest(now: try at("2026-06-10T12:00:00Z"), size: 1)))?.until == (try at("2026-06-10T17:00:00Z")))
        #expect(deferral(two.decide(DownloadRequest(now: try at("2026-06-10T18:00:00Z"), size: 1)))?.until == (try at("2026-06-11T06:00:00Z")))
        #expect(two.decide(DownloadRequest(now: try at("2026-06-11T06:30:00Z"), size: 1)) == .allowed(note: nil))
        let refusal = expectRefusal(.invalidWindow, naming: "download window '25:00-03:00'") {
            _ = try DownloadPolicy(windows: ["25:00-03:00"], zone: nil, defaultZone: .current, rate: nil, metered: nil)
        }
        #expect(refusal?.message.contains("apply window") == false)
        expectRefusal(.invalidTimeZone, naming: "'CET'") {
            _ = try DownloadPolicy(windows: ["01:00-03:00@CET"], zone: nil, defaultZone: .current, rate: nil, metered: nil)
        }
        expectRefusal(.invalidDownloadPolicy, naming: "download rate '2 furlongs'") {
            _ = try DownloadPolicy(windows: [], zone: nil, defaultZone: .current, rate: "2 furlongs", metered: nil)
        }
    }

    @Test("metered modes read: never, always, patches:SIZE in decimal and binary units")
    func meteredText() throws {
        #expect(try MeteredAllowance(parsing: "never") == .never)
        #expect(try MeteredAllowance(parsing: "always") == .always)
        #expect(try MeteredAllowance(parsing: "patches:5MB") == .patches(upTo: 5_000_000))
        #expect(try MeteredAllowance(parsing: "patches:512KiB") == .patches(upTo: 524_288))
        #expect(try MeteredAllowance(parsing: "patches:1.5GB") == .patches(upTo: 1_500_000_000))
        #expect(try MeteredAllowance(parsing: "patches:20000") == .patches(upTo: 20_000))
        #expect(try MeteredAllowance(parsing: MeteredAllowance.patches(upTo: 524_288).description) == .patches(upTo: 524_288))
        expectRefusal(.invalidDownloadPolicy, naming: "'sometimes' is not never, always or patches:SIZE") {
            _ = try MeteredAllowance(parsing: "sometimes")
        }
        expectRefusal(.invalidDownloadPolicy, naming: "'patches:' has no size") { _ = try MeteredAllowance(parsing: "patches:") }
        expectRefusal(.invalidDownloadPolicy, naming: "no known size unit") { _ = try MeteredAllowance(parsing: "patches:5XB") }
        expectRefusal(.invalidDownloadPolicy, naming: "out of range") { _ = try MeteredAllowance(parsing: "patches:10B") }
        expectRefusal(.invalidDownloadPolicy, naming: "'Never'") { _ = try MeteredAllowance(parsing: "Never") }
    }

    @Test("a metered link: never defers until the link changes; patches:SIZE takes a small patch only")
    func metered() throws {
        let now = try at("2026-06-10T12:00:00Z")
        let never = DownloadPolicy(metered: .never)
        let stopped = deferral(never.decide(DownloadRequest(now: now, metered: true, size: 1000, isPatch: true)))
        #expect(stopped?.reason == .metered)
        #expect(stopped?.until == nil)
        #expect(stopped?.description.contains("waits for a link that is not metered") == true)
        #expect(never.decide(DownloadRequest(now: now, metered: false, size: 1000)) == .allowed(note: nil))
        let patches = DownloadPolicy(metered: .patches(upTo: 5_000_000))
        #expect(patches.decide(DownloadRequest(now: now, metered: true, size: 5_000_000, isPatch: true)) == .allowed(note: nil))
        let big = deferral(patches.decide(DownloadRequest(now: now, metered: true, size: 5_000_001, isPatch: true)))
        #expect(big?.reason == .metered)
        #expect(big?.description.contains("5000001-byte patch is over the 5000000-byte limit") == true)
        let archive = deferral(patches.decide(DownloadRequest(now: now, metered: true, size: 1_000, isPatch: false)))
        #expect(archive?.description.contains("not the 1000-byte archive") == true)
        #expect(patches.decide(DownloadRequest(now: now, metered: false, size: 200_000_000)) == .allowed(note: nil))
    }

    @Test("a hold defers until it ends, then until a window opens")
    func hold() throws {
        let now = try at("2026-06-10T12:00:00Z")
        let anyTime = DownloadPolicy()
        let held = deferral(anyTime.decide(DownloadRequest(now: now, holdUntil: try at("2026-06-10T12:05:00Z"), size: 1)))
        #expect(held?.reason == .held)
        #expect(held?.until == (try at("2026-06-10T12:05:00Z")))
        #expect(anyTime.decide(DownloadRequest(now: now, holdUntil: now, size: 1)) == .allowed(note: nil))
        // Held past noon by a hold that ends outside the window: the window's next opening.
        let night = try policy(["22:00-06:00@UTC"])
        let both = deferral(night.decide(DownloadRequest(now: try at("2026-06-10T05:00:00Z"), holdUntil: try at("2026-06-10T07:00:00Z"), size: 1)))
        #expect(both?.reasons == [.held])
        #expect(both?.reason == .held)
        #expect(both?.until == (try at("2026-06-10T22:00:00Z")))
    }

    @Test("the apply deadline: a deferral lasts at most until it; past it windows and holds give way, a metered never does not")
    func deadline() throws {
        let night = try policy(["22:00-06:00@UTC"], metered: .never)
        let deadline = try at("2026-06-10T15:00:00Z")
        let before = deferral(night.decide(DownloadRequest(now: try at("2026-06-10T12:00:00Z"), size: 1, applyDeadline: deadline)))
        #expect(before?.until == deadline)
        let heldBefore = deferral(
            night.decide(
                DownloadRequest(
                    now: try at("2026-06-10T23:00:00Z"), holdUntil: try at("2026-06-11T09:00:00Z"), size: 1,
                    applyDeadline: try at("2026-06-11T01:00:00Z"))))
        #expect(heldBefore?.reason == .held)
        #expect(heldBefore?.until == (try at("2026-06-11T01:00:00Z")))
        let past = try at("2026-06-10T15:00:00Z")
        #expect(
            night.decide(DownloadRequest(now: past, holdUntil: try at("2026-06-10T16:00:00Z"), size: 1, applyDeadline: deadline))
                == .allowed(note: "the apply deadline has passed: downloading now, window and hold notwithstanding"))
        let metered = deferral(night.decide(DownloadRequest(now: past, metered: true, size: 1, applyDeadline: deadline)))
        #expect(metered?.reasons == [.metered])
        #expect(metered?.until == nil)
    }
}
