import Foundation

/// Processes as `/proc` lists them, for tests that find a child by name (the shell under
/// `xvfb-run`, WebKit's web process under the shell) or must end a child together with
/// what it started.
public enum ProcessTree {
    /// A live process: `/proc/PID/stat`'s pid, parent, process group and name (`comm`, at
    /// most 15 characters).
    public struct Entry: Sendable {
        public let pid: Int32
        public let parent: Int32
        public let group: Int32
        public let name: String
    }

    /// Every live process (zombies left out).
    public static func all() -> [Entry] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return nil }
            let rest = stat[stat.index(after: close)...].split(separator: " ")
            guard rest.count > 2, rest[0] != "Z", let parent = Int32(rest[1]), let group = Int32(rest[2]) else { return nil }
            return Entry(pid: pid, parent: parent, group: group, name: String(stat[stat.index(after: open)..<close]))
        }
    }

    /// Whether `pid` is a live process (a zombie is not: it has ended, only its parent
    /// has not collected it yet).
    public static func isLive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return false
        }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// The live children of `pid`.
    public static func children(of pid: Int32) -> [Entry] {
        all().filter { $0.parent == pid }
    }

    /// The live members of process group `group` (an orphan stays in its group: Xvfb after
    /// `xvfb-run` ended).
    public static func members(ofGroup group: Int32) -> [Entry] {
        all().filter { $0.group == group }
    }

    /// The live descendants of `pid` (children, their children, …).
    public static func descendants(of pid: Int32) -> [Int32] {
        let byParent = Dictionary(grouping: all(), by: \.parent)
        var found: [Int32] = []
        var queue = byParent[pid] ?? []
        while let next = queue.popLast() {
            found.append(next.pid)
            queue += byParent[next.pid] ?? []
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
