import ClientFoundation
import Foundation
import Synchronization
import TestSupport
import Testing

/// sd_notify(3)'s protocol against a real datagram socket the test binds, as systemd does:
/// a path in a temporary folder, or a name in the abstract namespace.
@Suite struct SystemdNotifierTests {
    @Test func noNotifySocketNoNotifier() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/notify"]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "vsock:2:1234"]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "@"]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "a", count: 200)]) == nil)
    }

    @Test func readyStatusWatchdogAndStoppingArriveAsDatagrams() async throws {
        let tmp = try TemporaryDirectory("notify")
        let listener = try NotifyListener(path: tmp("notify.sock"))
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address]))
        #expect(notifier.socketPath == listener.address)
        #expect(notifier.ready(status: "serving 1.0.0"))
        #expect(notifier.status("two\nlines\r\0here"))
        #expect(notifier.watchdog())
        #expect(notifier.send(["lower": "dropped", "1ST": "dropped", "ERRNO": "5", "BUSERROR": "a=b"]))
        #expect(notifier.stopping())
        try await listener.wait(for: "five datagrams") { $0.count == 5 }
        #expect(
            listener.datagrams == [
                "READY=1\nSTATUS=serving 1.0.0", "STATUS=two lines  here", "WATCHDOG=1", "ERRNO=5\nBUSERROR=a=b", "STOPPING=1",
            ])
    }

    @Test func theAbstractNamespaceIsAnAtName() async throws {
        let listener = try NotifyListener(abstractName: "clientctl-notify-test-\(UUID().uuidString)")
        #expect(listener.address.hasPrefix("@"))
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address]))
        #expect(notifier.watchdog())
        try await listener.wait(for: "WATCHDOG=1 on the abstract socket") { $0.first?["WATCHDOG"] == "1" }
    }

    @Test func theWatchdogIntervalIsHalfOfWatchdogUsecForThisProcessOnly() throws {
        let pid = getpid()
        #expect(SystemdNotifier.watchdogInterval(in: ["WATCHDOG_USEC": "400000"], processID: pid) == .milliseconds(200))
        #expect(SystemdNotifier.watchdogInterval(in: ["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "\(pid)"], processID: pid) == .milliseconds(200))
        #expect(SystemdNotifier.watchdogInterval(in: ["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "\(pid + 1)"], processID: pid) == nil)
        #expect(SystemdNotifier.watchdogInterval(in: ["WATCHDOG_USEC": "0"], processID: pid) == nil)
        #expect(SystemdNotifier.watchdogInterval(in: ["WATCHDOG_USEC": "soon"], processID: pid) == nil)
        #expect(SystemdNotifier.watchdogInterval(in: [:], processID: pid) == nil)

        let tmp = try TemporaryDirectory("notify")
        let socket = ["NOTIFY_SOCKET": tmp("notify.sock")]
        let mine = try #require(SystemdNotifier(environment: socket.merging(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(pid)"]) { $1 }))
        #expect(mine.watchdogInterval == .seconds(15))
        let another = try #require(SystemdNotifier(environment: socket.merging(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(pid + 1)"]) { $1 }))
        #expect(another.watchdogInterval == nil)
    }

    /// Nobody listening, or a receiver whose queue is full: the send fails at once and
    /// is reported, never blocks (without MSG_DONTWAIT the 11th send would wait for ever).
    @Test func aMissingOrFullSocketNeverBlocks() async throws {
        let tmp = try TemporaryDirectory("notify")
        let nobody = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": tmp("nobody.sock")]))
        #expect(!nobody.watchdog())
        #expect(!nobody.watchdog())

        let stuck = try NotifyListener(path: tmp("stuck.sock"), collecting: false)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": stuck.address]))
        let results = try await Self.within(30) { (0..<200).map { _ in notifier.watchdog() } }
        #expect(results.first == true, "the first datagrams are queued")
        #expect(results.last == false, "a full queue refuses the datagram instead of blocking")
    }

    /// `work`'s result, run on a thread of its own; a failure when it has not returned within
    /// `seconds` (a bound for a hang, not a measure: the blocked thread is left behind).
    static func within<T: Sendable>(_ seconds: Double, _ work: @escaping @Sendable () -> T) async throws -> T {
        let resumed = Mutex(false)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                let first = resumed.withLock { resumed -> Bool in
                    defer { resumed = true }
                    return !resumed
                }
                if first { continuation.resume(with: result) }
            }
            Thread.detachNewThread { finish(.success(work())) }
            Deadline.after(.milliseconds(Int(seconds * 1000))) {
                finish(.failure(HarnessError("still blocked after \(seconds) s")))
            }
        }
    }
}
