import ClientFoundation
import ClientUpdater
import DeviceIdentity
import DeviceSetup
import Foundation
import SignedManifest
import Synchronization

/// A device's key for its report batches: an Ed25519 key made at set-up, as `init` makes
/// one. Signatures decide nothing the run prints (the collector checks them, and a batch
/// whose signature does not match is a rule broken).
struct SimDeviceKey: ReportSigner {
    /// The private key, PEM (the key type is not Sendable; the device's own key is kept so too).
    private let pem: String
    let publicKey: DevicePublicKey

    init() throws {
        let key = try Ed25519.PrivateKey.generate()
        guard let raw = DevicePublicKey(raw: key.publicKey.rawRepresentation) else { throw CocoaError(.coderInvalidValue) }
        pem = try key.pemRepresentation()
        publicKey = raw
    }

    func sign(_ message: [UInt8]) throws -> [UInt8] { try Ed25519.PrivateKey(pem: pem, source: "device key").signature(for: message) }
}

/// The report sender's jitter for one device, drawn from the seed.
final class SimJitter: Sendable {
    private let random: Mutex<SimRandom>

    init(seed: UInt64, device: Int) { random = Mutex(SimRandom.stream(seed, ["reports", "\(device)"])) }

    /// A number in 0..<1.
    func next() -> Double { random.withLock { Double($0.next() >> 11) / Double(1 << 53) } }
}

extension SimRun {
    /// Device `n`'s report sender, as `DeviceEngine.reportSender()` makes one: the root's
    /// journal, its id, app and channel, the collector's URL, the device's one transport (the
    /// network), its key and the file that counts refusals, on the device's clocks.
    func sender(_ n: Int) -> ReportSender {
        if let made = devices[n].sender { return made }
        let device = devices[n]
        let wall = device.wall
        var options = ReportSender.Options()
        options.now = { wall.now }
        options.clock = device.monotonic
        let jitter = device.jitter
        options.random = { jitter.next() }
        let made = ReportSender(
            source: ReportJournal(layout: device.layout, now: { wall.now }),
            identity: ReportIdentity(device: device.id, app: Self.app, channel: "stable"),
            url: URL(string: Self.collectorURL) ?? URL(fileURLWithPath: "/"),
            transport: network, options: options, refusalFile: device.layout.root + "/" + ReportSender.refusalFileName, signer: device.key)
        devices[n].sender = made
        return made
    }

    /// After a step: device `n` delivers what its journal holds, as `install` does before it
    /// exits (at most 30 s of its clock), the collector meeting the step's faults. What is not
    /// delivered stays in the journal for the next step.
    ///
    /// It delivers at `at` on its clock (five minutes after the step began), not when the
    /// step's parallel downloads happened to end: reports that wait for company are due by
    /// their recorded times, so the moment they are looked at must be the seed's.
    func deliverReports(_ n: Int, faults: Bool, at: SimInstant) async {
        let clock = devices[n].clock
        clock.advance(to: at)
        let wall = devices[n].wall
        network.begin(
            SimNetwork.Context(
                device: n, check: devices[n].history.count, clock: clock, faults: faults, wall: { wall.now }, barred: { false }))
        let attempts = await sender(n).flush(within: .seconds(30))
        _ = network.end()
        for attempt in attempts {
            switch attempt {
            case .failed(_, let why): say("device \(n): reports wait: \(Self.short(why))", at: at)
            case .dropped(let count, let why): say("device \(n): \(count) reports dropped: \(Self.short(why))", at: at)
            default: break
            }
        }
        for problem in network.collector.drainProblems() { violation("reports", problem) }
    }

    /// The `reports` invariant, once the quiet day is over: half a day later (so reports that
    /// wait for company are due) every report each device journaled reached the collector,
    /// seq 1 to its last in its stream, kills and all; the collector kept none twice (a
    /// second report under one identity is caught as it arrives).
    func reportsInvariant(end: SimInstant) async {
        for n in devices.indices {
            let journal = ReportJournal(layout: devices[n].layout, now: { [wall = devices[n].wall] in wall.now })
            for attempt in 0..<5 where journal.status.pending > 0 {
                await deliverReports(n, faults: false, at: end.advanced(by: .seconds(Int64(13 * 3600 + attempt * 60))))
            }
            let status = journal.status
            if status.pending > 0 {
                violation("reports", "device \(n): \(status.pending) reports are still in its journal half a day after the quiet day")
            }
            let streams = network.collector.seqs(device: devices[n].id.description)
            let stored = streams[journal.stream()] ?? []
            let missing = (Int64(1)...max(1, status.lastSeq)).filter { !stored.contains($0) && status.lastSeq > 0 }
            if !missing.isEmpty {
                let list = missing.prefix(8).map(String.init).joined(separator: ",") + (missing.count > 8 ? ",…" : "")
                violation(
                    "reports",
                    "device \(n): \(missing.count) of its \(status.lastSeq) reports never reached the collector (seq \(list); "
                        + "\(status.dropped) dropped by its journal)")
            }
            if let extra = stored.max(), extra > status.lastSeq {
                violation("reports", "device \(n): the collector holds seq \(extra), beyond the last its journal gave out (\(status.lastSeq))")
            }
            if streams.count > 1 { violation("reports", "device \(n) sent reports in \(streams.count) streams (its journal's state was lost)") }
        }
        let figures = network.collector.figures
        outcome.reports = figures.stored
        outcome.reportDuplicates = figures.duplicates
        outcome.reportFaults = figures.faults
    }
}
