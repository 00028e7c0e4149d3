import ClientFoundation
import ClientUpdater
import Foundation

/// A disk that fills or fails a write in the middle of a check.
///
/// `FaultPoint` makes the n-th hit of a write point fail with an `errno` when
/// `CLIENTCTL_FAIL_AT=<point>:<n>:<errno>` is set; the plan is read once per process, as a
/// kill's is. So the check runs in a child, the crash worker (``SimCrash``), with the
/// variable: the write fails there as it fails on a full (`ENOSPC`) or failing (`EIO`) disk,
/// the updater's own handling of that failure runs, and the child ends the check. The
/// process did not die: the device goes on from what the child left, without a restart.
enum SimDisk {
    /// A write that fails: the `count`-th hit of `point`, with `errno`.
    struct Fault: Equatable, Sendable {
        var point: String
        var count: Int
        var errno: String

        /// The value of `CLIENTCTL_FAIL_AT`.
        var variable: String { "\(point):\(count):\(errno)" }
    }

    /// The write points on a check's path: the crash points (each is a ``FaultPoint``) and the
    /// report journal's append, which every check with a collector reaches.
    static let points = SimCrash.points + ["journal.appended"]

    /// The failures a disk gives: full, and failing.
    static let errnos = ["ENOSPC", "EIO"]

    /// The points every check passes: its records (state, last check, the clock's floor) and
    /// its reports.
    static let everyCheck = ["atomic.written", "atomic.before-rename", "atomic.renamed", "journal.appended"]

    /// The disk fault of check `number` of device `n`, if any, from the seed's stream named
    /// by the device and the check. One check in five when the device is behind the newest
    /// release inside its windows (`behind`): any point of ``points``, at one of the first
    /// three hits for the points a check passes many times. One in thirty of the others: the
    /// first hit of a point every check passes, so most of them meet it.
    static func draw(seed: UInt64, device n: Int, check number: Int, behind: Bool) -> Fault? {
        var stream = SimRandom.stream(seed, ["disk", "\(n)", "\(number)"])
        guard stream.chance(behind ? 0.2 : 1.0 / 30) else { return nil }
        let errno = errnos[Int(stream.next() % UInt64(errnos.count))]
        guard behind else { return Fault(point: everyCheck[Int(stream.next() % UInt64(everyCheck.count))], count: 1, errno: errno) }
        let point = points[Int(stream.next() % UInt64(points.count))]
        let count = SimCrash.repeated.contains(point) || point == "journal.appended" ? 1 + Int(stream.next() % 3) : 1
        return Fault(point: point, count: count, errno: errno)
    }
}

extension SimRun {
    /// Check `number` of device `n` runs in a child whose write at `fault` fails; the device
    /// goes on from the root the child left (no restart: its process did not die), with the
    /// trial of a release the check installed, as after any check.
    func faultedCheck(_ n: Int, number: Int, fault: SimDisk.Fault, startWall: Date) async {
        // The child takes the root's lock: the simulation's updater lets go of it. The
        // device's report sender stays: its process lives on.
        if let updater = devices[n].updater { await updater.shutdown() }
        devices[n].updater = nil
        let clock = devices[n].clock
        let spec = childSpec(n, number: number)
        let ended: SimCrash.Ended
        do {
            ended = try SimCrash.run(spec, plan: .fail(fault))
        } catch {
            violation("disk", "device \(n) check \(number): the child process did not run: \(error)")
            return
        }
        if ended.faulted { outcome.diskFaults += 1 }
        if ended.killed { violation("disk", "device \(n) check \(number): the child died at \(fault.variable)") }
        for line in ended.overflow { violation("window-or-hold", line) }
        let result = ended.result ?? "no result"
        say(
            "device \(n) check \(number): " + result
                + (ended.faulted
                    ? " (a write failed at \(fault.point), hit \(fault.count): \(fault.errno))"
                    : " (\(fault.point) reached fewer than \(fault.count) times)"))
        if let now = ended.now { clock.advance(to: SimInstant(offset: .nanoseconds(now))) }
        let before = devices[n].lastManifest
        learn(n, ended.ledger)
        let unpacked = Self.unpacked(devices[n].layout)
        for taken in unpacked.subtracting(devices[n].unpacked).compactMap(Version.init).sorted()
        where !devices[n].ran.contains(taken.description) {
            judgeTake(n, taken, ledger: ended.ledger, before: before, walls: [startWall, devices[n].wall.now])
        }
        devices[n].unpacked = unpacked
        // A check the failure did not stop (a record it could not write) installed or staged
        // as any check does: its trial runs.
        if result.hasPrefix("installed") || result.hasPrefix("staged"), let pending = try? await updater(n).status().pending {
            await trial(n, pending)
        }
    }
}
