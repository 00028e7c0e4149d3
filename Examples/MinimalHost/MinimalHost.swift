// A host embedding the engine with public API only: open a root, run its agent (the host
// loop `clientctl serve` and the shell run too) in the DeviceHost's ServiceGroup with a
// bridge and a sink for its events, acknowledge start-up, shut the host down.
//
//     minimal-host ROOT     (a root made by `clientctl init`, and `clientctl install`)
//
// A real host points its web view at the folder and acknowledges once the page has
// loaded; this one prints the folder, acknowledges at once and stops (SIGTERM or SIGINT
// would stop it the same way).
import ClientEngine
import ClientFoundation
import ClientUpdater
import Foundation

/// The host side of the engine: where the page is served from, and reloading it.
struct PrintingBridge: HostBridge {
    func setServerBasePath(_ path: String) async throws {
        print("serve \(path)")
    }

    func reload() async throws {
        print("reload")
    }
}

@main
enum MinimalHost {
    static func main() async {
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: minimal-host ROOT\n".utf8))
            exit(64)
        }
        do {
            let engine = try DeviceEngine.open(root: CommandLine.arguments[1])
            // The sinks get every event, start-up's own included, in order. Checks every hour.
            let agent = DeviceAgent(
                engine, sinks: [{ event in print("event \(event)") }], bridge: PrintingBridge(), checkEvery: .seconds(3600))
            let host = DeviceHost(agent, stopsOnSignals: true)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await host.run() }
                // Start-up has chosen the version to serve (this throws what start-up threw).
                _ = try await host.startedUp()
                // The page of the served version has loaded: confirm it (ends a trial).
                let version = await agent.updater.currentVersion
                try await agent.updater.startupDidComplete(version: version)
                print("acknowledged \(version ?? "the embedded seed")")
                // Done: the agent says STOPPING=1, shuts the updater down and waits until
                // the sinks have had every event.
                await host.shutDown()
                try await tasks.waitForAll()
            }
        } catch let error as any ClientctlError {
            FileHandle.standardError.write(Data("minimal-host: \(error.message)\n".utf8))
            exit(error.kind == .tempFail ? 75 : 1)
        } catch {
            FileHandle.standardError.write(Data("minimal-host: \(error)\n".utf8))
            exit(1)
        }
    }
}
