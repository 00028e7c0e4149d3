import Foundation
import Synchronization

/// Speaks systemd's notification protocol (sd_notify(3)) without libsystemd: one datagram
/// of newline-separated `KEY=VALUE` lines to the `AF_UNIX` datagram socket named by
/// `NOTIFY_SOCKET` (a leading `@` names the abstract namespace).
///
/// A service started with `Type=notify` tells systemd with it when it is ready
/// (``ready(status:)``), what it is doing (``status(_:)``), that it is alive
/// (``watchdog()``, every ``watchdogInterval`` under `WatchdogSec=`) and that it is
/// stopping (``stopping()``). Without `NOTIFY_SOCKET` there is no notifier (`init` returns
/// `nil`), so a host writes `notifier?.watchdog()` and runs the same way outside systemd.
///
/// Sending never blocks (`MSG_DONTWAIT` on a `SOCK_CLOEXEC` socket opened once) and never
/// throws: a notification systemd cannot take is dropped, and the first failure is
/// reported once on stderr. Values are sent on one line: newlines in them become spaces.
///
/// ```swift
/// let notifier = SystemdNotifier()
/// notifier?.ready(status: "serving 1.2.0")
/// if let interval = notifier?.watchdogInterval { /* call notifier?.watchdog() every interval */ }
/// notifier?.stopping()
/// ```
public final class SystemdNotifier: Sendable {
    // `descriptor`, `address` and `addressLength` are immutable after init (sendto(2) on one
    // descriptor from several threads is safe); `failureReported` is in a `Mutex`.
    /// The socket systemd listens on, as `NOTIFY_SOCKET` names it (`@` for the abstract namespace).
    public let socketPath: String
    /// How often to send ``watchdog()``: half of `WATCHDOG_USEC`, as sd_watchdog_enabled(3)
    /// advises; `nil` when systemd runs no watchdog for this process.
    public let watchdogInterval: Duration?
    private let descriptor: Int32
    private let address: sockaddr_un
    private let addressLength: socklen_t
    private let failureReported = Mutex(false)

    /// The notifier `environment` asks for; `nil` when `NOTIFY_SOCKET` is unset or empty,
    /// is neither an absolute path nor an `@` name (such as systemd's `vsock:` addresses),
    /// does not fit a socket address, or on a system without systemd's protocol (not Linux).
    /// - Parameter environment: the process's environment (injectable for tests).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        #if os(Linux)
            guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
            guard let (address, length) = Self.socketAddress(path) else {
                Self.report("NOTIFY_SOCKET=\(path) is not an absolute path or an @ name that fits a socket address: not notifying")
                return nil
            }
            let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else {
                Self.report("cannot open a socket for NOTIFY_SOCKET: \(String(cString: strerror(errno)))")
                return nil
            }
            self.socketPath = path
            self.descriptor = descriptor
            self.address = address
            self.addressLength = length
            self.watchdogInterval = Self.watchdogInterval(in: environment, processID: getpid())
        #else
            return nil
        #endif
    }

    deinit { close(descriptor) }

    /// Half of `WATCHDOG_USEC` when it is a positive number of microseconds and
    /// `WATCHDOG_PID` is absent or names `processID`; otherwise `nil` (the watchdog is for
    /// another process, or there is none).
    public static func watchdogInterval(in environment: [String: String], processID: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], !pid.isEmpty, Int32(pid) != processID { return nil }
        return .microseconds(Int64(clamping: microseconds / 2))
    }

    /// Sends `fields` in one datagram, in their order (`["READY": "1", "STATUS": "…"]`).
    /// A key that is not upper-case letters, digits and `_` is left out; a value's line
    /// breaks and NUL bytes become spaces.
    /// - Returns: whether systemd's socket took the datagram (failures are not thrown).
    @discardableResult
    public func send(_ fields: KeyValuePairs<String, String>) -> Bool {
        #if os(Linux)
            let datagram = Array(Self.datagram(fields).utf8)
            let sent = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                        var result: Int
                        repeat {
                            result = sendto(
                                descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), socketAddress,
                                addressLength)
                        } while result < 0 && errno == EINTR
                        return result < 0 ? errno : 0
                    }
                }
            }
            guard sent != 0 else { return true }
            let first = failureReported.withLock { reported -> Bool in
                defer { reported = true }
                return !reported
            }
            if first {
                Self.report("cannot notify \(socketPath): \(String(cString: strerror(sent))) (later failures are not reported)")
            }
            return false
        #else
            return false
        #endif
    }

    /// `READY=1` with `STATUS=status`: start-up is complete.
    @discardableResult
    public func ready(status: String) -> Bool { send(["READY": "1", "STATUS": status]) }

    /// `STATUS=status`: one line `systemctl status` shows.
    @discardableResult
    public func status(_ status: String) -> Bool { send(["STATUS": status]) }

    /// `WATCHDOG=1`: the process is alive (send it every ``watchdogInterval``).
    @discardableResult
    public func watchdog() -> Bool { send(["WATCHDOG": "1"]) }

    /// `STOPPING=1`: the process is shutting down.
    @discardableResult
    public func stopping() -> Bool { send(["STOPPING": "1"]) }

    /// The datagram's text: `KEY=VALUE` lines, invalid keys left out, values on one line.
    static func datagram(_ fields: KeyValuePairs<String, String>) -> String {
        var lines: [String] = []
        for (key, value) in fields where isValidKey(key) {
            let flat = String(value.unicodeScalars.map { $0 == "\n" || $0 == "\r" || $0 == "\0" ? " " : Character($0) })
            lines.append(key + "=" + flat)
        }
        return lines.joined(separator: "\n")
    }

    /// Upper-case ASCII letters, digits and `_`, not starting with a digit (sd_notify's keys).
    static func isValidKey(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return key.utf8.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
    }

    #if os(Linux)
        /// The socket address of `path`: a file system path (with its NUL) or, after `@`, an
        /// abstract name (a leading NUL, no trailing one); `nil` when it is neither or too long.
        static func socketAddress(_ path: String) -> (sockaddr_un, socklen_t)? {
            var name = Array(path.utf8)
            guard let first = name.first, first == UInt8(ascii: "/") || (first == UInt8(ascii: "@") && name.count > 1), !name.contains(0)
            else { return nil }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let capacity = MemoryLayout.size(ofValue: address.sun_path)
            let abstract = first == UInt8(ascii: "@")
            if abstract { name[0] = 0 }
            guard name.count + (abstract ? 0 : 1) <= capacity else { return nil }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
            let pathOffset = MemoryLayout<sockaddr_un>.size - capacity
            return (address, socklen_t(pathOffset + name.count + (abstract ? 0 : 1)))
        }
    #endif

    private static func report(_ message: String) {
        Console.err("systemd notify: \(message)\n")
    }
}
