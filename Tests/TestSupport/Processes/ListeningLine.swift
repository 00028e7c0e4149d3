import ClientFoundation
import Foundation

/// Waits for a server child process to print the line that names its port, as
/// `clientctl serve` ("serving http://127.0.0.1:PORT") and `clientctl collect`
/// ("collecting on http://127.0.0.1:PORT") do on stderr.
enum ListeningLine {
    /// The port after `marker` in the file at `stderrPath`, polled every 20 ms for up to
    /// 30 s. It looks once more after the deadline: a test task that waited past it on a
    /// busy pool must still see a line printed meanwhile (a CI run once refused a listening
    /// serve). A process that ends or never prints the line is sent SIGTERM and the wait
    /// throws, naming `what` and what the process printed.
    static func wait(for process: ChildProcess.Running, stderrPath: String, marker: String, what: String) async throws -> Int {
        let deadline = Date().addingTimeInterval(30)
        var listening: Int?
        while true {
            listening = port(in: read(stderrPath), after: marker)
            guard listening == nil, process.isRunning, Date() < deadline else { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        guard let listening else {
            process.signalChild(SIGTERM)
            throw HarnessError("\(what) did not start listening: \(read(stderrPath))")
        }
        return listening
    }

    /// The number right after `marker` in `text`.
    static func port(in text: String, after marker: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// The file's text, or "" when it cannot be read.
    static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
}
