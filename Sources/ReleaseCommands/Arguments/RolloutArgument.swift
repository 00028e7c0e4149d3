import ArgumentParser
import Foundation
import SignedManifest

/// `--rollout`: a percent (`25`, `12.5`) or a schedule of `TIME:PERCENT` steps after the
/// start (`0:5,1d:25,2d:100`; TIME in seconds or with s, m, h or d). Anything else is
/// refused while parsing.
struct RolloutArgument: ExpressibleByArgument, Sendable, Equatable {
    let percent: Double?
    let steps: [Rollout.Step]

    init?(argument: String) {
        let text = argument.hasSuffix("%") ? String(argument.dropLast()) : argument
        if !text.contains(":") {
            guard let p = Double(text), p.isFinite, (0...100).contains(p) else { return nil }
            percent = p
            steps = []
            return
        }
        var steps: [Rollout.Step] = []
        for part in text.split(separator: ",") {
            let pair = part.split(separator: ":")
            guard pair.count == 2, let seconds = Self.seconds(String(pair[0])), let p = Double(pair[1]), p.isFinite, (0...100).contains(p),
                steps.last.map({ $0.seconds < seconds && $0.percent <= p }) ?? true
            else { return nil }
            steps.append(Rollout.Step(seconds: seconds, percent: p))
        }
        guard (1...Rollout.maxSteps).contains(steps.count) else { return nil }
        percent = nil
        self.steps = steps
    }

    static func seconds(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        if let last = text.last, let unit = units[last], let n = Int64(text.dropLast()), n >= 0 { return n * unit }
        return Int64(text).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The rollout starting at `start` (a schedule's time 0).
    func rollout(start: Date) -> Rollout {
        if let percent { return .percent(percent) }
        return Rollout(start: Date(timeIntervalSince1970: floor(start.timeIntervalSince1970)), steps: steps)
    }
}
