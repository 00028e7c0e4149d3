import Foundation

/// Writes to stdout and stderr without Foundation's `FileHandle.write(_:)`, which traps
/// when a write fails (a signal interrupting a write to a full pipe, a closed pipe):
/// output here retries interrupted writes and gives up quietly on a closed stream (a
/// reader of `clientctl-shell --events` that stops reading must not crash the shell).
package enum Console {
    /// Writes `data` to stdout (data and `--json`).
    package static func out(_ data: Data) { write(data, to: STDOUT_FILENO) }

    /// Writes `text` to stderr (messages, progress).
    package static func err(_ text: String) { write(Data(text.utf8), to: STDERR_FILENO) }

    private static func write(_ data: Data, to fd: Int32) {
        data.withUnsafeBytes { raw in
            guard var p = raw.baseAddress else { return }
            var left = raw.count
            while left > 0 {
                let n = Glibc.write(fd, p, left)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                p += n
                left -= n
            }
        }
    }
}
