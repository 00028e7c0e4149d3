// A host embedding the engine with public API only: open a root, start its agent (the host
// loop `clientctl serve` and the shell run too) with a bridge and a sink for its events,
// acknowledge start-up, shut down.
//
//     minimal-host ROOT     (a root made by `clientctl init`, and `clientctl install`)
//
// A real host points its web view at the folder and acknowledges once the page has
// loaded; this one prints the folder and acknowledges at once.
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
            // The sinks get every event, start-up's own included, in order.
            let agent = DeviceAgent(engine, sinks: [{ event in print("event \(event)") }])
            try await agent.start(bridge: PrintingBridge())
            // The page of the served version has loaded: confirm it (ends a trial).
            let version = await agent.updater.currentVersion
            try await agent.updater.startupDidComplete(version: version)
            print("acknowledged \(version ?? "the embedded seed")")
            // Asked to stop: systemd hears it, then the agent waits until the sinks have all.
            agent.stopping()
            await agent.shutdown()
        } catch let error as any ClientctlError {
            FileHandle.standardError.write(Data("minimal-host: \(error.message)\n".utf8))
            exit(error.kind == .tempFail ? 75 : 1)
        } catch {
            FileHandle.standardError.write(Data("minimal-host: \(error)\n".utf8))
            exit(1)
        }
    }
}
