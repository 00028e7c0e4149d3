import ClientFoundation
import Foundation
import StrictJSON

/// A staged rollout, signed in the manifest (`rollout`): which share of devices takes the
/// release now, with no server logic — each device decides from its own id.
///
/// Forms: a plain percent (`"rollout": 25`), or an object with either `percent` or a
/// schedule (`"start": RFC 3339, "steps": [[seconds after start, percent], …]`), and
/// `"paused": true` to stop new installs (installed devices are left alone).
///
/// Where the devices come from (docs/targeting.md#two-releases-at-once): each device has a
/// place 0…9999 in a *draw* (``bucket(channel:draw:deviceId:)``), by default one of the
/// release's own; a release takes the places from ``from`` up, as many as its percent. Two
/// releases of one draw whose ranges do not overlap never take the same device, and a
/// percent that grows only adds places.
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
    /// The draw the device's place is taken in (`draw`); nil: the release's own version, so
    /// each release draws its own devices first.
    public var draw: String?
    /// Where in the draw the release's places begin, in percent (`from`, default 0): it
    /// takes places `from × 100` up to `(from + percent) × 100`.
    public var from: Double

    /// Most steps in a schedule.
    public static let maxSteps = 32

    public init(start: Date? = nil, steps: [Step], paused: Bool = false, draw: String? = nil, from: Double = 0) {
        self.start = start
        self.steps = steps
        self.paused = paused
        self.draw = draw
        self.from = from
    }

    /// The highest percent the rollout reaches.
    public var highestPercent: Double { steps.map(\.percent).max() ?? 0 }

    /// The draw's name for a release of `version`: ``draw``, else the version.
    public func drawName(version: String) -> String { draw ?? version }

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
        bucket(channel: channel, draw: version, deviceId: deviceId)
    }

    /// The device's place in `draw` of `channel`, 0…9999:
    /// `SHA-256("rollout" ‖ channel ‖ draw ‖ deviceId) mod 10000` (a release's own draw is
    /// its version, ``bucket(channel:version:deviceId:)``).
    public static func bucket(channel: String, draw: String, deviceId: String) -> Int {
        let hex = Digest.hex(.sha256, of: Data(("rollout" + channel + draw + deviceId).utf8))
        return hex.reduce(0) { ($0 * 16 + ($1.hexDigitValue ?? 0)) % 10_000 }
    }

    /// The places `percent` takes from ``from`` on: `from × 100 ..< (from + percent) × 100`
    /// (`12.5` from 0 → places 0…1249).
    public func places(percent: Double) -> Range<Int> {
        let low = Int((from * 100).rounded())
        return low..<max(low, min(10_000, Int(((from + percent) * 100).rounded())))
    }

    /// Whether the device in `bucket` takes the release at `now` (never while paused): its
    /// place is among ``places(percent:)`` of the percent in force.
    public func admits(bucket: Int, at now: Date) -> Bool {
        !paused && places(percent: percent(at: now)).contains(bucket)
    }

    /// Longest ``draw`` name.
    public static let maxDrawLength = 64

    /// The JSON value as the manifest carries it.
    public var jsonValue: JSONValue {
        if start == nil, steps.count == 1, steps[0].seconds == 0, !paused, draw == nil, from == 0,
            let whole = Int64(exactly: steps[0].percent)
        {
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
        if let draw { o["draw"] = .string(draw) }
        if from != 0 { o["from"] = Self.number(from) }
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
        let allowed: Set<String> = ["start", "steps", "percent", "paused", "draw", "from"]
        if let unknown = o.keys.first(where: { !allowed.contains($0) }) { throw bad("has an unknown member '\(unknown)'") }
        var paused = false
        if let p = o["paused"] {
            guard case .bool(let b) = p else { throw bad("member 'paused' must be true or false") }
            paused = b
        }
        var draw: String?
        if let d = o["draw"] {
            guard case .string(let name) = d, drawProblem(name) == nil else {
                throw bad("member 'draw' must be a name of 1 to \(maxDrawLength) letters, digits, '.', '_', '-' or '+'")
            }
            draw = name
        }
        var from = 0.0
        if let f = o["from"] {
            from = try percent(f)
        }
        func placed(_ rollout: Rollout) throws -> Rollout {
            var r = rollout
            r.draw = draw
            r.from = from
            guard from + r.highestPercent <= 100 else {
                throw bad("takes places from \(from) % to \(from + r.highestPercent) %, past 100 %")
            }
            return r
        }
        switch (o["percent"], o["steps"]) {
        case (let p?, nil):
            guard o["start"] == nil else { throw bad("has 'start' without 'steps'") }
            return try placed(.percent(try percent(p), paused: paused))
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
            return try placed(Rollout(start: start, steps: steps, paused: paused))
        default:
            throw bad("needs either 'percent' or 'start' and 'steps'")
        }
    }

    /// Why `name` cannot be a ``draw``, or nil: 1 to ``maxDrawLength`` ASCII letters,
    /// digits, `.`, `_`, `-` or `+` (a version is one).
    public static func drawProblem(_ name: String) -> String? {
        guard (1...maxDrawLength).contains(name.utf8.count) else { return "is \(name.utf8.count) characters, 1 to \(maxDrawLength) allowed" }
        let allowed = name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x5F || c == 0x2D || c == 0x2B
        }
        return allowed ? nil : "has a character other than letters, digits, '.', '_', '-' and '+'"
    }
}
