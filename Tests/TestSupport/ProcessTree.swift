import Foundation

/// Processes as `/proc` lists them, for tests that must end a child together with what it
/// started (`xvfb-run` starts Xvfb and the shell, the shell starts WebKit's processes).
public enum ProcessTree {
    /// The live descendants of `pid` (children, their children, …), read from
    /// `/proc/PID/stat`'s parent field.
    public static func descendants(of pid: Int32) -> [Int32] {
        var parents: [Int32: [Int32]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, fields[0] != "Z", let parent = Int32(fields[1]) else { continue }
            parents[parent, default: []].append(child)
        }
        var found: [Int32] = []
        var queue = parents[pid] ?? []
        while let next = queue.popLast() {
            found.append(next)
            queue += parents[next] ?? []
        }
        return found
    }

    /// Sends SIGKILL to `pid` and to every descendant (listed first, so none is orphaned
    /// before it is found); the number of processes signalled.
    @discardableResult
    public static func kill(_ pid: Int32) -> Int {
        let all = [pid] + descendants(of: pid)
        for process in all { _ = Foundation.kill(process, SIGKILL) }
        return all.count
    }
}
