import ClientFoundation
import Foundation
import StrictJSON

/// A staged rollout, signed in the manifest (`rollout`): which share of devices takes the
/// release now, with no server logic — each device decides from its own id.
///
/// Forms: a plain percent (`"rollout": 25`), or an object with either `percent` or a
/// schedule (`"start": RFC 3339, "steps": [[seconds after start, percent], …]`), and
/// `"paused": true` to stop new installs (installed devices are left alone).
public struct Rollout: Sendable, Equatable {
    /// A percent that holds from `seconds` after ``start`` on.
    public struct Step: Sendable, Equatable {
        public var seconds: Int64
        public var percent: Double
        public init(seconds: Int64, percent: Double) {
            self.seconds = seconds
            self.percent = percent
        }
    }

    /// When the schedule starts (schedules only).
    public var start: Date?
    /// The schedule, ascending, or one step at 0 for a plain percent.
    public var steps: [Step]
    /// No new installs while paused.
    public var paused: Bool

    /// Most steps in a schedule.
    public static let maxSteps = 32

    public init(start: Date? = nil, steps: [Step], paused: Bool = false) {
        self.start = start
        self.steps = steps
        self.paused = paused
    }

    /// A plain percent.
    public static func percent(_ percent: Double, paused: Bool = false) -> Rollout {
        Rollout(steps: [Step(seconds: 0, percent: percent)], paused: paused)
    }

    /// The percent in force at `now`: the last step reached (0 before the first, and
    /// before `start`).
    public func percent(at now: Date) -> Double {
        let elapsed = start.map { now.timeIntervalSince($0) } ?? .infinity
        return steps.last { Double($0.seconds) <= elapsed }?.percent ?? 0
    }

    /// The device's place in line for `version` of `channel`, 0…9999:
    /// `SHA-256("rollout" ‖ channel ‖ version ‖ deviceId) mod 10000`, so a different subset
    /// of devices goes first for each release.
    public static func bucket(channel: String, version: String, deviceId: String) -> Int {
        let hex = Digest.hex(.sha256, of: Data(("rollout" + channel + version + deviceId).utf8))
        return hex.reduce(0) { ($0 * 16 + ($1.hexDigitValue ?? 0)) % 10_000 }
    }

    /// Whether the device in `bucket` takes the release at `now` (never while paused): its
    /// place is below the percent in hundredths (`12.5` → places 0…1249).
    public func admits(bucket: Int, at now: Date) -> Bool {
        !paused && bucket < Int((percent(at: now) * 100).rounded())
    }

    /// The JSON value as the manifest carries it.
    public var jsonValue: JSONValue {
        if start == nil, steps.count == 1, steps[0].seconds == 0, !paused, let whole = Int64(exactly: steps[0].percent) {
            return .integer(whole)
        }
        var o = JSONObject()
        if let start {
            o["start"] = .string(RFC3339.format(start))
            o["steps"] = .array(steps.map { .array([.integer($0.seconds), Self.number($0.percent)]) })
        } else {
            o["percent"] = Self.number(steps.first?.percent ?? 0)
        }
        if paused { o["paused"] = .bool(true) }
        return .object(o)
    }

    package static func number(_ value: Double) -> JSONValue {
        Int64(exactly: value).map { .integer($0) } ?? .double(value)
    }

    /// Reads the `rollout` field.
    /// - Throws: ``ManifestRejection`` naming `rollout`.
    public static func parse(_ value: JSONValue) throws -> Rollout {
        func bad(_ why: String) -> ManifestRejection { ManifestRejection(.invalidValue, field: "rollout", "field 'rollout' \(why)") }
        func percent(_ v: JSONValue?) throws -> Double {
            let p: Double
            switch v {
            case .integer(let n)?: p = Double(n)
            case .double(let d)?: p = d
            default: throw bad("needs a percent (a number from 0 to 100)")
            }
            guard p.isFinite, (0...100).contains(p) else { throw bad("percent \(p) is not between 0 and 100") }
            return p
        }
        if case .integer = value { return .percent(try percent(value)) }
        if case .double = value { return .percent(try percent(value)) }
        guard case .object(let o) = value else {
            throw ManifestRejection(.wrongType, field: "rollout", "field 'rollout' must be a percent or an object, got \(value.typeName)")
        }
        let allowed: Set<String> = ["start", "steps", "percent", "paused"]
        if let unknown = o.keys.first(where: { !allowed.contains($0) }) { throw bad("has an unknown member '\(unknown)'") }
        var paused = false
        if let p = o["paused"] {
            guard case .bool(let b) = p else { throw bad("member 'paused' must be true or false") }
            paused = b
        }
        switch (o["percent"], o["steps"]) {
        case (let p?, nil):
            guard o["start"] == nil else { throw bad("has 'start' without 'steps'") }
            return .percent(try percent(p), paused: paused)
        case (nil, .array(let entries)?):
            guard case .string(let text)? = o["start"], let start = RFC3339.parse(text) else {
                throw bad("needs 'start', an RFC 3339 UTC time, with 'steps'")
            }
            guard (1...maxSteps).contains(entries.count) else { throw bad("has \(entries.count) steps: 1 to \(maxSteps)") }
            var steps: [Step] = []
            for entry in entries {
                guard case .array(let pair) = entry, pair.count == 2, case .integer(let seconds) = pair[0], seconds >= 0 else {
                    throw bad("steps must be [seconds after start, percent] pairs with seconds ≥ 0")
                }
                let step = Step(seconds: seconds, percent: try percent(pair[1]))
                if let last = steps.last, step.seconds <= last.seconds || step.percent < last.percent {
                    throw bad("steps must go forward in time and never lower the percent")
                }
                steps.append(step)
            }
            return Rollout(start: start, steps: steps, paused: paused)
        default:
            throw bad("needs either 'percent' or 'start' and 'steps'")
        }
    }
}
