import Foundation

/// The only operating-system-specific facts the core reads, in one place, so the library
/// compiles wherever a native host runs (Linux is built and tested; Darwin compiles the
/// fallbacks). Everything else uses POSIX calls through Foundation.
package enum Platform {
    /// Whether `pid` is a zombie (or dying) process: Linux reads the state letter of
    /// `/proc/<pid>/stat` (`Z` or `X`, proc(5)); elsewhere `false` (not known).
    package static func isZombie(_ pid: Int32) -> Bool {
        #if os(Linux)
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.first == "Z" || fields.first == "X"
        #else
            return false
        #endif
    }

    /// An id that changes on every boot: Linux `/proc/sys/kernel/random/boot_id`;
    /// `nil` elsewhere (trials are then judged by the process id alone).
    package static func bootID() -> String? {
        #if os(Linux)
            guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
            let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return id.isEmpty ? nil : id
        #else
            return nil
        #endif
    }
}
