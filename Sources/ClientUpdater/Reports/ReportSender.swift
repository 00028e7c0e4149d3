import ClientFoundation
import DeviceIdentity
import DeviceTargeting
import FleetReports
import Foundation
import Synchronization

/// Sends the journal's pending reports to the collector (docs/fleet-reports.md#delivery):
/// batches of at most 500 reports / 200 KiB, zstd-compressed, `POST <url>/v1/reports` on
/// the same transport as updates. On a 200 the batch leaves the journal; anything else
/// leaves it there (at-least-once: the collector removes duplicates by (device, seq)).
///
/// Two ways to run it:
/// - ``flush(within:)``: `install` and `ack` deliver what is pending before they exit,
///   within a few seconds; what is left stays for the next run.
/// - ``run()``: `serve`, the shell and embedding hosts keep one running on a low-priority
///   task; ``wake()`` (a `DeviceAgent` sink) tells it a report was recorded. When to send
///   is ``ReportDeliverySchedule``'s decision.
///
/// Either way, reports that only say "still here" (a heartbeat, a wait for the rollout's
/// place) wait up to 12 hours for company (``ReportDeliverySchedule/heldUntil(_:now:hold:)``).
///
/// Never in the way: every request is bounded (``Options/timeLimit``), nothing here holds
/// the root's lock, and a failure only postpones delivery.
package final class ReportSender: Sendable {
    /// The sender's bounds and clocks.
    package struct Options: Sendable {
        /// The whole of one request, connecting included.
        package var timeLimit: Duration = .seconds(20)
        /// No byte from the collector for this long ends a request.
        package var idleTimeout: Duration = .seconds(10)
        /// How often ``run()`` looks at the journal when nothing woke it (heartbeats
        /// recorded by another process of the root).
        package var idlePoll: Duration = .seconds(15 * 60)
        package var tuning: ReportDeliverySchedule.Tuning = .standard
        /// The wall clock (journal times, `Retry-After` dates).
        package var now: @Sendable () -> Date = { Date() }
        /// The monotonic clock of the schedule and of the loop's waits.
        package var clock: MonotonicClock = .continuous
        /// The jitter's random source: a number in 0..<1.
        package var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

        package init() {}
    }

    /// How one attempt ended, for the caller and the tests.
    package enum Attempt: Sendable, Equatable {
        /// Nothing was pending.
        case nothingPending
        /// Only reports that can wait were pending: they go with the next report that
        /// matters, or at `until` (``ReportDeliverySchedule/heldUntil(_:now:hold:)``).
        case held(until: Date)
        /// The collector stored reports up to `through`; `more`: others are pending.
        case delivered(count: Int, through: Int64, more: Bool)
        /// The attempt failed; the reports stay. `why`: one line.
        case failed(ReportDeliverySchedule.Outcome, why: String)
        /// The collector refused the batch too often: `count` reports were dropped.
        case dropped(count: Int, why: String)
    }

    /// The file, under the root, that counts the collector's refusals of the oldest batch.
    package static let refusalFileName = "reports/refused-batch"

    private let source: any ReportSource
    private let identity: ReportIdentity
    /// `<base>/v1/reports`.
    package let endpoint: URL
    private let transport: any Transport
    private let signer: (any ReportSigner)?
    private let options: Options
    /// Where the refusal count of a batch is kept across processes (nil: in memory only).
    private let refusalFile: String?

    private struct Loop {
        var schedule: ReportDeliverySchedule
        var woken = false
        /// The device's labels as last read (``ReportSource/labels()``), for a moment they cannot be.
        var labels = DeviceLabels()
    }
    private let loop: Mutex<Loop>
    /// What ends ``run()``'s wait early: a report recorded, or cancellation.
    private let signal: WakeSignal

    /// - Parameters:
    ///   - url: the collector's base URL (``ReportDelivery/reportURL(config:)``).
    ///   - refusalFile: keeps how often the collector refused the oldest batch, so separate
    ///     `install` runs drop it after a few refusals too.
    ///   - signer: the device's key; with one, batches are schema 2, signed (none: schema 1).
    package init(
        source: any ReportSource, identity: ReportIdentity, url: URL, transport: any Transport, options: Options = Options(),
        refusalFile: String? = nil, signer: (any ReportSigner)? = nil
    ) {
        self.signer = signer
        self.source = source
        self.identity = identity
        self.endpoint = url.appendingPathComponent("v1").appendingPathComponent("reports")
        self.transport = transport
        self.options = options
        self.refusalFile = refusalFile
        self.signal = WakeSignal(clock: options.clock)
        var schedule = ReportDeliverySchedule(tuning: options.tuning, now: options.clock.now)
        if let refusalFile, let (seq, count) = Self.readRefusals(refusalFile) {
            schedule.refusedSeq = seq
            schedule.refusedCount = count
        }
        self.loop = Mutex(Loop(schedule: schedule))
    }

    // MARK: Attempts

    /// Sends the oldest pending batch once and records the outcome in the journal.
    /// - Parameter timeLimit: the bound of this request (at most ``Options/timeLimit``).
    package func attempt(timeLimit: Duration? = nil) async -> Attempt {
        let reports = source.pending(maxReports: ReportSenderBatch.maxReports, maxBytes: ReportSenderBatch.maxBytes)
        guard let first = reports.first, let last = reports.last else {
            loop.withLock { $0.schedule.nothingPending() }
            return .nothingPending
        }
        let wallNow = options.now()
        if let until = ReportDeliverySchedule.heldUntil(reports, now: wallNow, hold: options.tuning.hold) {
            // At least a millisecond: a hold that ends within the rounding would otherwise be
            // due at once, and the loop would read the journal again and again until it ends.
            let at = options.clock.now + max(.milliseconds(1), .seconds(clamping: until.timeIntervalSince(wallNow)))
            loop.withLock { $0.schedule.holding(until: at) }
            return .held(until: until)
        }
        let started = options.clock.now
        loop.withLock { $0.schedule.attempting(now: started) }
        // The labels of the device's config now: a batch tells the collector the device's
        // labels as they are when it is sent (the signature covers them with the rest).
        let read = source.labels()
        let labels = loop.withLock { loop in
            if let read { loop.labels = read }
            return loop.labels
        }
        var batch = ReportBatch(device: identity.device, app: identity.app, channel: identity.channel, reports: reports, labels: labels)
        if let signer {
            batch.key = signer.publicKey
            batch.stream = source.stream()
        }
        let limit = min(timeLimit ?? options.timeLimit, options.timeLimit)
        var (outcome, why) = await send(batch, firstSeq: first.seq, timeLimit: limit)
        if case .refused = outcome, !batch.labels.isEmpty, why.contains("labels") {
            // A collector older than labels (schema 4) refuses the member: the reports matter
            // more than the labels, so the same reports go again without them, signed anew.
            batch.labels = DeviceLabels()
            (outcome, why) = await send(batch, firstSeq: first.seq, timeLimit: limit)
        }
        let date = options.now()
        var more = false
        if case .delivered = outcome {
            source.delivered(through: last.seq, at: date)
            more = !source.pending(maxReports: 1, maxBytes: ReportSenderBatch.maxBytes).isEmpty
            outcome = .delivered(more: more)
        }
        let verdict = loop.withLock { loop in
            loop.schedule.attempted(outcome, now: options.clock.now, random: options.random())
        }
        defer { saveRefusals() }
        switch (outcome, verdict) {
        case (.delivered, _):
            return .delivered(count: reports.count, through: last.seq, more: more)
        case (.refused, .dropBatch):
            let line =
                "dropped \(reports.count) reports (seq \(first.seq)–\(last.seq)) the collector refused "
                + "\(options.tuning.maxRefusals) times: \(why)"
            source.dropped(reports.count, through: last.seq, at: date, reason: line)
            return .dropped(count: reports.count, why: line)
        default:
            source.deliveryFailed(at: date, reason: why)
            return .failed(outcome, why: why)
        }
    }

    /// Delivers what is pending, batch after batch, until nothing is left, an attempt fails,
    /// only reports that can wait are left (``Attempt/held(until:)``) or `limit` has
    /// passed on the sender's clock (`install` and `ack` before they exit); the rest stays.
    /// - Returns: every attempt made, in order.
    @discardableResult
    package func flush(within limit: Duration) async -> [Attempt] {
        let end = options.clock.now + limit
        var attempts: [Attempt] = []
        while true {
            let left = end - options.clock.now
            guard left > .milliseconds(50) else { return attempts }
            let result = await attempt(timeLimit: left)
            attempts.append(result)
            switch result {
            case .delivered(_, _, true), .dropped: continue
            default: return attempts
            }
        }
    }

    /// One POST of `batch`, judged: the outcome for the schedule and a line for status.
    private func send(_ batch: ReportBatch, firstSeq: Int64, timeLimit: Duration) async -> (ReportDeliverySchedule.Outcome, String) {
        let body: Data
        let json = batch.encoded()
        var headers = ["Content-Type": "application/json", "Accept": "application/json"]
        if let signer {
            do {
                headers[ReportBatch.signatureHeader] = Self.hex(try signer.sign(Array(json)))
            } catch {
                return (.failed, "cannot sign the batch with the device key: \(error)")
            }
        }
        do {
            body = try ReportSenderBatch.zstd(json)
            headers["Content-Encoding"] = "zstd"
        } catch {
            body = json
        }
        let request = TransportExchange(
            method: "POST", url: endpoint, headers: headers, body: body, idleTimeout: min(options.idleTimeout, timeLimit), timeLimit: timeLimit)
        let reply: TransportReply
        do {
            reply = try await transport.exchange(request)
        } catch let error as UpdaterError {
            return (.failed, "POST \(endpoint.absoluteString): \(error.message)")
        } catch {
            return (.failed, "POST \(endpoint.absoluteString): \(error)")
        }
        let said = Self.errorText(reply.body).map { ": \($0)" } ?? ""
        switch reply.status {
        case 200..<300:
            return (.delivered(more: false), "delivered")
        case 429, 503:
            let wait = reply[header: "retry-after"].flatMap { RetryAfter.parse($0, now: options.now()) }
            return (.busy(retryAfter: wait), "the collector answered \(reply.status) (busy)\(said)")
        case 400..<500:
            return (.refused(firstSeq: firstSeq), "the collector refused the batch with \(reply.status)\(said)")
        case 300..<400:
            return (.failed, "the collector answered \(reply.status) (a redirect: report URLs are not redirected; fix reportURL)")
        default:
            return (.failed, "the collector answered \(reply.status)\(said)")
        }
    }

    // MARK: Running

    /// Delivers in the background until cancelled: at start what is pending, then what
    /// ``wake()`` announces, on ``ReportDeliverySchedule``'s timing. Run it on a task of
    /// its own (`Task(priority: .background)`): it never blocks a check or a trial.
    package func run() async {
        if !source.pending(maxReports: 1, maxBytes: ReportSenderBatch.maxBytes).isEmpty {
            let now = options.clock.now
            loop.withLock { $0.schedule.reportsWaiting(now: now) }
        }
        while !Task.isCancelled {
            let now = options.clock.now
            let due = loop.withLock { loop -> Duration? in
                if loop.woken {
                    loop.woken = false
                    loop.schedule.reportsWaiting(now: now)
                }
                return loop.schedule.due
            }
            if let due, due <= now {
                _ = await attempt()
                continue
            }
            let wait = due.map { $0 - now } ?? options.idlePoll
            // A wake() since the loop looked is not lost: the signal keeps it for this wait.
            await signal.wait(upTo: min(wait, options.idlePoll))
            if due == nil, !Task.isCancelled {
                // The idle poll: a report another process recorded (a heartbeat).
                let pending = !source.pending(maxReports: 1, maxBytes: ReportSenderBatch.maxBytes).isEmpty
                if pending { loop.withLock { $0.woken = true } }
            }
        }
    }

    /// A report was recorded: the running ``run()`` sends it within the batching window.
    /// Cheap and non-blocking (a `DeviceAgent` sink calls it for every event).
    package func wake() {
        loop.withLock { $0.woken = true }
        signal.wake()
    }

    /// When the next attempt of ``run()`` is due (monotonic), for tests and status.
    package var due: Duration? { loop.withLock { $0.schedule.due } }

    // MARK: Helpers

    /// The collector's `{"error": "…"}`, clipped to one short line.
    static func errorText(_ body: Data) -> String? {
        guard !body.isEmpty, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let text = object["error"] as? String
        else { return nil }
        return FleetReport.clip(text.replacingOccurrences(of: "\n", with: " "))
    }

    /// Lowercase hex of `bytes`.
    package static func hex(_ bytes: [UInt8]) -> String {
        LowerHex.encode(bytes)
    }

    private func saveRefusals() {
        guard let refusalFile else { return }
        let (seq, count) = loop.withLock { ($0.schedule.refusedSeq, $0.schedule.refusedCount) }
        if let seq, count > 0 {
            try? AtomicFile.write(Data("\(seq) \(count)\n".utf8), to: refusalFile)
        } else if unlink(refusalFile) != 0 {
            // Absent already: nothing was refused.
        }
    }

    private static func readRefusals(_ path: String) -> (Int64, Int)? {
        guard let data = try? BoundedFile.read(path, cap: 64, code: UpdaterError.Code.io) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, let seq = Int64(parts[0]), let count = Int(parts[1]) else { return nil }
        return (seq, count)
    }
}
