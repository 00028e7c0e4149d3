import Foundation
import TestSupport

/// An open server-sent event stream.
final class EventStreamConnection: @unchecked Sendable {
    // Used by one test at a time; `received` is only touched inside `offload` calls made in sequence.
    private let fd: Int32
    private var received = Data()

    init(port: Int, path: String = "/__clientctl/events") async throws {
        // Connect and send the head in one step: the server closes a connection whose head
        // has not come within its header timeout (10 s), and a task resumed between the two on
        // a busy cooperative pool (the full suite on 2 cores) once came back after it.
        fd = try await LoopbackHTTP.offload {
            let fd = try LoopbackHTTP.connect(port: port)
            do {
                try LoopbackHTTP.send(fd, LoopbackHTTP.head("GET", path, port: port, headers: ["Accept": "text/event-stream"]))
            } catch {
                close(fd)
                throw error
            }
            return fd
        }
    }

    deinit { close(fd) }

    /// Reads until everything received so far contains `text`; returns it all.
    func waitFor(_ text: String) async throws -> String {
        try await LoopbackHTTP.offload { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: received, as: UTF8.self).contains(text) {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 {
                    let why = n == 0 ? "closed by the server" : "read failed: errno \(errno)"
                    throw LoopbackHTTP.Failure(
                        description: "stream ended before \(text.debugDescription) (\(why)): \(String(decoding: received, as: UTF8.self))")
                }
                received.append(contentsOf: buffer[0..<n])
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Reads until the peer closes the connection; true if it did.
    func waitForClose() async throws -> Bool {
        try await LoopbackHTTP.offload { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n == 0 { return true }
                if n < 0 { return false }
            }
        }
    }
}
