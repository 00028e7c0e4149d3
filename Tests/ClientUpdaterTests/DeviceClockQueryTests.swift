import AuthenticatedTime
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientUpdater

/// The clock asks time servers through its seam (`DeviceClock.TimeServerQuery`), which the
/// engine fills with the Roughtime client: ClientUpdater links no UDP client of its own.
struct DeviceClockQueryTests {
    static let floor = Date(timeIntervalSince1970: 1_800_000_000)
    static let reading = ClockReading(wall: floor + 86_400, uptime: .seconds(1_000), bootID: "boot-1")

    /// The seam gets the servers, the quorum (at most their number) and the timeout; its
    /// interval is kept and raises the floor.
    @Test func theSeamAsksTheServersAndItsIntervalIsKept() async throws {
        let tmp = try TemporaryDirectory("clock-query")
        let servers = try [1, 2].map { try RoughtimeServer(host: "127.0.0.\($0)", port: 2002, publicKey: [UInt8](repeating: 7, count: 32)) }
        let asked = Mutex<[String]>([])
        let reading = Self.reading
        let clock = DeviceClock(
            layout: RootLayout(root: tmp.path), clocks: { reading }, programDate: Self.floor, servers: servers, quorum: 3,
            query: { servers, quorum, timeout in
                asked.withLock { $0.append("\(servers.count) servers, quorum \(quorum), \(timeout)") }
                return AuthenticatedTime(
                    earliest: reading.wall - 2, latest: reading.wall + 2, obtainedAt: reading, agreeing: servers.map(\.description))
            })
        #expect(await clock.authenticate(timeout: .seconds(2)) == nil)
        #expect(asked.withLock { $0 } == ["2 servers, quorum 2, 2.0 seconds"])
        let status = clock.status()
        #expect(status.authenticated?.servers == ["roughtime://127.0.0.1:2002", "roughtime://127.0.0.2:2002"], "\(status)")
        #expect(status.floor == reading.wall - 2 && status.verdict == .trusted, "\(status)")
    }

    /// Servers named but nothing to ask them with: the failure says so, as any failure is kept.
    @Test func serversWithoutAQueryFailSayingSo() async throws {
        let server = try RoughtimeServer(host: "127.0.0.1", port: 2002, publicKey: [UInt8](repeating: 7, count: 32))
        let reading = Self.reading
        let clock = DeviceClock(layout: nil, clocks: { reading }, programDate: Self.floor, servers: [server])
        let line = await clock.authenticate()
        #expect(line == "authenticated time: no time server client in this host (DeviceEngine.open passes one)")
        #expect(clock.status().authenticationFailure == line)
    }
}
