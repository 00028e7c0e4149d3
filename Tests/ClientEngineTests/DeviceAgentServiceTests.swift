import ClientEngine
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// `DeviceAgent` is a swift-service-lifecycle `Service` whose `run()` is all there is to
/// start and stop it: in a `ServiceGroup` (its own, or the one `DeviceHost` builds) it
/// starts the engine, checks periodically and, when the group shuts down gracefully or its
/// task is cancelled, shuts the updater down (its lock released) and ends. Its fleet reports go through the transport the host
/// gave the engine, like every fetch of the channel.
@Suite struct DeviceAgentServiceTests {
    /// A host's transport that counts what passes through it and hands it to `inner`.
    final class CountingTransport: Transport {
        let inner: any Transport
        private let counts = Mutex<[String: Int]>([:])
        init(_ inner: any Transport) { self.inner = inner }

        func count(_ method: String, _ path: String) -> Int { counts.withLock { $0["\(method) \(path)"] ?? 0 } }

        func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse {
            counts.withLock { $0["GET \(request.url.path)", default: 0] += 1 }
            return try await inner.get(request, sink: sink)
        }

        func get(
            _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
            sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
        ) async throws -> TransportResponse {
            counts.withLock { $0["GET \(request.url.path)", default: 0] += 1 }
            return try await inner.get(request, head: head, sink: sink)
        }

        func exchange(_ request: TransportExchange) async throws -> TransportReply {
            counts.withLock { $0["\(request.method) \(request.url.path)", default: 0] += 1 }
            return try await inner.exchange(request)
        }
    }

    /// Serves nothing; keeps the folders it was told to serve, which a test waits on.
    final class NoBridge: HostBridge {
        let told = Observed<[String]>([])
        var folders: [String] { told.value }
        func setServerBasePath(_ path: String) async throws { told.update { $0.append(path) } }
        func reload() async throws {}
    }

    /// Returns once `condition` holds, read again after each event of `driver`'s machine
    /// (a decision, a download's start or end): what the driver allows changes only then.
    /// - Throws: ``HarnessError`` naming `what` when it does not hold within `timeout` (a
    ///   bound for a hang).
    static func untilDriver(
        _ what: String, _ changes: AsyncStream<Void>, timeout: Duration = .seconds(60),
        _ condition: @escaping @Sendable () async -> Bool
    ) async throws {
        let met = await Deadline.race(timeout) { () async -> Bool in
            var next = changes.makeAsyncIterator()
            while !(await condition()) {
                guard await next.next() != nil else { return false }
            }
            return true
        }
        guard case .success(true) = met else { throw HarnessError("no \(what) within \(timeout)") }
    }

    @Test func theAgentRunsInAServiceGroupAndReportsThroughTheHostsTransport() async throws {
        let device = try DeviceFixture()
        let collector = try ReportCollectorStub()
        defer { collector.stop() }
        device.config.reportURL = collector.baseURL
        try device.config.save(device.layout)
        try await device.installAndCommit(["1.0.0"])
        try device.publish("1.1.0")
        let transport = CountingTransport(DefaultTransport(settings: HTTPTransportSettings()))
        let engine = try DeviceEngine.open(device.layout, options: .init(transport: transport, logger: .quiet))
        #expect(engine.transport is CountingTransport, "the engine keeps the transport the host gave it")

        let started = Mutex<LifecycleReport?>(nil)
        let checked = Observed(0)
        let agent = DeviceAgent(
            engine, sinks: [{ event in if case .updateAvailable = event { checked.update { $0 += 1 } } }], bridge: NoBridge(),
            checkEvery: .milliseconds(200), started: { report in started.withLock { $0 = report } })
        let group = ServiceGroup(services: [agent], logger: .quiet)
        let running = Task { try await group.run() }
        // A periodic check finds 1.1.0; what the device did is reported.
        do {
            try await checked.wait(for: "1.1.0 found by a periodic check", timeout: .seconds(60)) { $0 > 0 }
            try await collector.arrivals.wait(for: "reports delivered", timeout: .seconds(60)) { $0 > 0 }
        } catch {
            Issue.record(
                "\(error): found \(checked.value), received \(collector.received.count), GET manifest \(transport.count("GET", "/stable/manifest.json"))"
            )
        }
        #expect(started.withLock { $0 } != nil, "`started` ran once start-up ended")
        await group.triggerGracefulShutdown()
        try await running.value

        #expect(transport.count("GET", "/stable/manifest.json") >= 1, "the channel fetched through the host's transport")
        #expect(transport.count("POST", "/v1/reports") >= 1, "reports went through the host's transport")
        #expect(transport.count("POST", "/v1/reports") == collector.received.filter { $0.path == "/v1/reports" }.count)
        // Shut down: the root's agent lock is free for the next host.
        let next = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        _ = try await next.updater.start(bridge: NoBridge())
        await next.updater.shutdown()
    }

    /// A feed that answers 503 with `Retry-After: 3` is asked again no sooner than 3 s later,
    /// though the agent checks every 0.3 s: within a check's retries and between checks.
    @Test func aFeedsRetryAfterHoldsThePeriodicChecksBack() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        let asked = Observed<[ContinuousClock.Instant]>([])
        device.faults.add(
            .custom { response in
                asked.update { $0.append(.now) }
                response = LoopbackResponse(status: 503, headers: [("Retry-After", "3")])
            }, path: "/stable/manifest.json")
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let agent = DeviceAgent(engine, bridge: NoBridge(), checkEvery: .milliseconds(300))
        let group = ServiceGroup(services: [agent], logger: .quiet)
        let running = Task { try await group.run() }
        try await asked.wait(for: "three refused requests for the manifest", timeout: .seconds(120)) { $0.count >= 3 }
        await group.triggerGracefulShutdown()
        try await running.value
        let times = asked.value
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= .seconds(3), "asked again after \(later - earlier)")
        }
    }

    /// Start-up's end reaches whoever waits for it (`startedUp()`), before and after it
    /// happened; an agent runs once; cancelling its task stops it and frees the root.
    @Test func startUpReachesWhoWaitsAndAnAgentRunsOnce() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let agent = DeviceAgent(engine, bridge: NoBridge(), checkEvery: .zero)
        let early = Task { try await agent.startedUp() }
        let running = Task { try await agent.run() }
        let report = try await early.value
        #expect(report.current == .installed("1.0.0"))
        #expect(try await agent.startedUp().current == .installed("1.0.0"), "told again to a later waiter")
        let again = await #expect(throws: EngineError.self) { try await agent.run() }
        #expect(again?.code == .invalidArgument)
        running.cancel()
        try await running.value
        let next = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        _ = try await next.updater.start(bridge: NoBridge())
        await next.updater.shutdown()
    }

    /// A start-up that fails (here its `started` hook) ends `run()` with that error, and
    /// whoever waits for start-up gets it too; the root is left free.
    @Test func aFailedStartUpReachesWhoWaits() async throws {
        struct Refused: Error {}
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let agent = DeviceAgent(engine, bridge: NoBridge(), checkEvery: .seconds(3600), started: { _ in throw Refused() })
        let host = DeviceHost(agent)
        let running = Task { try await host.run() }
        await #expect(throws: Refused.self) { try await host.startedUp() }
        await #expect(throws: Refused.self) { try await running.value }
        let next = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        _ = try await next.updater.start(bridge: NoBridge())
        await next.updater.shutdown()
    }

    /// A release with `apply` `now` found by a periodic check takes over right after that
    /// check, not at the next one (docs/apply-policies.md): the driver waits for a download
    /// only while the check runs. (Scripts/demo found the wait lasting until the next check.)
    @Test func aPeriodicCheckThatStagesAReleaseWithModeNowSwitchesRightAfterIt() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        try device.publish("1.1.0") { $0["apply"] = .object(["mode": .string("now")]) }
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let bridge = NoBridge()
        // The first check at once, the next one an hour later.
        let host = DeviceHost(DeviceAgent(engine, bridge: bridge, checkEvery: .seconds(3_600), firstCheck: {}))
        let running = Task { try await host.run() }
        do {
            try await bridge.told.wait(for: "1.1.0 switched to after the first check", timeout: .seconds(300)) {
                $0.last?.hasSuffix("/1.1.0") == true
            }
        } catch {
            Issue.record("\(error): \((try? await engine.updater.status())?.apply ?? "nothing staged")")
        }
        let folders = bridge.folders
        #expect(folders.last?.hasSuffix("/1.1.0") == true, "\(folders)")
        // The state is written before the bridge is told.
        #expect(StateStore.load(device.layout).current == "1.1.0")
        await host.shutDown()
        try await running.value
    }

    /// Every check tells the apply driver about its download, whoever asks for it: under
    /// `serve` a page's own `POST /__clientctl/check` (`checkForUpdates()`) went straight to
    /// the updater, so the switch the driver had allowed stayed allowed (`switchNow`) during
    /// the whole download of the next version. The next version's archive is held half way,
    /// so its download runs for as long as the test needs.
    @Test func aPagesCheckHoldsTheSwitchBackWhileItDownloads() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        let held = HeldTransport(DefaultTransport(settings: HTTPTransportSettings()), holding: "/stable/v1.2.0.tar.gz")
        let engine = try DeviceEngine.open(device.layout, options: .init(transport: held, logger: .quiet))
        let agent = DeviceAgent(engine, bridge: NoBridge(), checkEvery: .zero)
        let control = AgentControl(agent)  // serve's: a page's shim switches
        let host = DeviceHost(agent)
        let changes = agent.apply.changes()
        let running = Task { try await host.run() }
        _ = try await host.startedUp()
        // 1.1.0 (mode now) staged by a check: the driver allows the switch.
        try device.publish("1.1.0") { $0["apply"] = .object(["mode": .string("now")]) }
        try await agent.checkForUpdates()
        #expect(StateStore.load(device.layout).pending == "1.1.0")
        try await Self.untilDriver("switch to 1.1.0 allowed", changes) { (try? await control.status())?.switchNow == true }

        // The page checks while 1.2.0 is out: no switch during its download.
        try device.publish("1.2.0") { $0["apply"] = .object(["mode": .string("now")]) }
        let check = Task { try await control.checkForUpdates(version: "1.0.0") }
        await held.waitUntilHolding()
        let during = try await control.status()
        #expect(during.switchNow != true, "no switch while the page's check downloads")
        #expect(during.current == "1.0.0")
        held.release()
        _ = try await check.value
        try await Self.untilDriver("1.2.0 staged and allowed once the check ended", changes) {
            let status = try? await control.status()
            return status?.pending == "1.2.0" && status?.switchNow == true
        }
        await host.shutDown()
        try await running.value
    }
}
