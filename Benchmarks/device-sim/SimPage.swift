import ClientEngine
import ClientFoundation
import Foundation

/// A device's page in the agents' world, talking to its agent through `AgentControl` as the
/// shim does under `clientctl serve`. At each load it reads the version it was served (the
/// `index.html` of the folder the host serves) and behaves as that release's page does on
/// this device (``AgentWorld/PageKind``): it acknowledges its start 1 to 20 s later; or never;
/// or 61 to 120 s later, past the startup timeout; or it acknowledges, then throws on every
/// load and reloads itself every 5 to 10 minutes. Between loads it visits: every 5 to 30
/// minutes it reads the status and switches when the status says `switchNow` (the host then
/// reloads it), now and then reports input or navigates, and while faults last it may hold
/// downloads for 10 to 40 minutes. Every choice is drawn from the seed, the device, the life
/// and how many choices came before, on the world's one thread.
final class SimPage: @unchecked Sendable {
    // @unchecked: runs on the world's one thread (SimExecutor); its draws are its own.
    private let world: AgentWorld
    private let device: AgentWorld.Device
    private let control: AgentControl
    private let bridge: AgentBridge
    private let clock: SimClock
    private var random: SimRandom

    init(world: AgentWorld, device: AgentWorld.Device, control: AgentControl, bridge: AgentBridge, clock: SimClock) {
        self.world = world
        self.device = device
        self.control = control
        self.bridge = bridge
        self.clock = clock
        random = SimRandom.stream(world.options.seed, ["page", "\(device.n)", "\(device.lives)"])
    }

    private func minutes(_ low: Int, _ high: Int) -> Duration { .seconds(Int64(low * 60) + Int64(random.next() % UInt64((high - low) * 60))) }

    /// Until the life ends (its task cancelled).
    func run() async {
        var seen = 0
        var version: String?
        var nextVisit = clock.now.advanced(by: minutes(5, 30))
        var reloadAt: SimInstant?
        while !Task.isCancelled {
            let generation = bridge.generation
            if generation != seen || reloadAt.map({ clock.now >= $0 }) == true {
                seen = generation
                reloadAt = nil
                version = bridge.path.flatMap { FileManager.default.contents(atPath: $0 + "/index.html") }
                    .flatMap { String(data: $0, encoding: .utf8) }.flatMap(AgentWorld.version(inPage:))
                guard let version else { continue }
                world.outcome.loads += 1
                reloadAt = await load(version, generation: generation)
                continue
            }
            if clock.now >= nextVisit {
                await visit(version)
                nextVisit = clock.now.advanced(by: minutes(5, 30))
                continue
            }
            let wake = min(nextVisit, reloadAt ?? nextVisit)
            await bridge.signal.wait(upTo: clock.now.duration(to: wake))
        }
    }

    /// A load of `version`: its start as its page behaves on this device; the moment it
    /// reloads itself, for a page that throws.
    private func load(_ version: String, generation: Int) async -> SimInstant? {
        let kind = world.kind(device.n, version)
        switch kind {
        case .never:
            return nil
        case .good, .throwing:
            guard await sleep(.seconds(Int64(1 + random.next() % 20))), bridge.generation == generation else { return nil }
            _ = try? await control.startupDidComplete(version: version)
            guard kind == .throwing else { return nil }
            guard await sleep(.seconds(Int64(5 + random.next() % 30))), bridge.generation == generation else { return nil }
            try? await control.pageProblems(
                errors: Int64(1 + random.next() % 5), messages: ["TypeError: x is undefined"], appKinds: [], version: version)
            return clock.now.advanced(by: minutes(5, 10))
        case .late:
            // Late, whatever was loaded since: the page of that load answers when it does.
            guard await sleep(.seconds(Int64(61 + random.next() % 60))) else { return nil }
            _ = try? await control.startupDidComplete(version: version)
            return nil
        }
    }

    /// A visit between loads.
    private func visit(_ version: String?) async {
        if random.chance(0.5) { await control.userActivity(version: version) }
        if world.faultsOn.withLock({ $0 }), random.chance(0.15) {
            _ = try? await control.holdDownloads(lease: "page-visit", for: minutes(10, 40), version: version)
        }
        if random.chance(0.2) { await control.pageNavigates() }
        guard let status = try? await control.status(), status.pending != nil else { return }
        // The shim switches when the policy allows it; the page itself now and then asks.
        if status.switchNow == true || random.chance(0.1) {
            // Switched: the shim reloads the page, which then comes from the new folder.
            if (try? await control.switchToPendingVersion(version: version)) != nil { bridge.loaded() }
        }
    }

    /// Sleeps on the world's clock; false when the life ended meanwhile.
    private func sleep(_ duration: Duration) async -> Bool {
        do {
            try await clock.sleep(for: duration)
            return true
        } catch {
            return false
        }
    }
}
