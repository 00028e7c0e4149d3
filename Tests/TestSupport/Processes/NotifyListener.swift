import Foundation
import Synchronization

/// systemd's side of the notification protocol, for tests: an `AF_UNIX` datagram socket
/// bound in a folder (or in the abstract namespace) whose datagrams a thread of its own
/// collects, so a child given ``address`` as `NOTIFY_SOCKET` never finds the queue full
/// (Linux queues 10 datagrams by default).
public final class NotifyListener: Sendable {
    /// The value for `NOTIFY_SOCKET`: the socket's path, or `@name`.
    public let address: String
    private let inbox: Inbox

    /// Binds `path` (a new file in a folder the test owns).
    /// - Parameter collecting: `false` leaves every datagram queued (a receiver that never reads).
    public convenience init(path: String, collecting: Bool = true) throws {
        try self.init(address: path, collecting: collecting)
    }

    /// Binds the abstract name `@name`.
    public convenience init(abstractName name: String, collecting: Bool = true) throws {
        try self.init(address: "@" + name, collecting: collecting)
    }

    private init(address: String, collecting: Bool) throws {
        self.address = address
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var name = Array(address.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard name.count < capacity else {
            close(descriptor)
            throw HarnessError("\(address) is too long for a socket address")
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size - capacity + name.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw HarnessError("bind \(address): \(message)")
        }
        inbox = Inbox(descriptor: descriptor, collecting: collecting)
        if collecting {
            Thread.detachNewThread { [inbox] in inbox.collect() }
        }
    }

    deinit { inbox.stop() }

    /// Every datagram received so far, in order.
    public var datagrams: [String] { inbox.received }

    /// The `KEY=VALUE` lines of every datagram so far, one dictionary each.
    public var messages: [[String: String]] { datagrams.map(Self.fields) }

    /// The fields of one datagram.
    public static func fields(_ datagram: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in datagram.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return fields
    }

    /// Waits until `done` holds for the messages received so far, and returns them.
    /// - Throws: ``HarnessError`` naming `what` and what arrived when `timeout` passes first.
    @discardableResult
    public func wait(
        for what: String, timeout: Duration = .seconds(30), _ done: @escaping @Sendable ([[String: String]]) -> Bool
    ) async throws -> [[String: String]] {
        try await inbox.datagrams.wait(for: what, timeout: timeout) { done($0.map(Self.fields)) }.map(Self.fields)
    }

    /// The socket and what it received; the collecting thread holds it, not the listener.
    private final class Inbox: Sendable {
        /// Closed once: by the collecting thread when there is one, else by `stop`.
        let descriptor: Int32
        /// Every datagram so far; a test waits on its changes.
        let datagrams = Observed<[String]>([])
        private let stopped = Mutex(false)
        /// Whether a thread runs ``collect()`` (it then closes the descriptor).
        private let collecting: Bool

        init(descriptor: Int32, collecting: Bool) {
            self.descriptor = descriptor
            self.collecting = collecting
        }

        var received: [String] { datagrams.value }

        /// Reads datagrams until ``stop()`` (polling every 50 ms for the stop).
        func collect() {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while !stopped.withLock({ $0 }) {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count >= 0 else { continue }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                datagrams.update { $0.append(text) }
            }
            close(descriptor)
        }

        func stop() {
            stopped.withLock { $0 = true }
            if !collecting { close(descriptor) }
        }
    }
}
