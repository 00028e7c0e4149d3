// A host embedding the engine with public API only: open a root, start the engine with a
// bridge, listen to its events, acknowledge start-up, shut down.
//
//     minimal-host ROOT     (a root made by `clientctl init`, and `clientctl install`)
//
// A real host points its web view at the folder and acknowledges once the page has
// loaded; this one prints the folder and acknowledges at once.
import ClientEngine
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
            // Subscribe before starting, so no event is missed; the stream ends at shutdown.
            let events = engine.updater.events()
            let listener = Task {
                for await event in events { print("event \(event)") }
            }
            try await engine.updater.start(bridge: PrintingBridge())
            // The page of the served version has loaded: confirm it (ends a trial).
            let version = await engine.updater.currentVersion
            try await engine.updater.startupDidComplete(version: version)
            print("acknowledged \(version ?? "the embedded seed")")
            await engine.updater.shutdown()
            await listener.value
        } catch let error as any ClientctlError {
            FileHandle.standardError.write(Data("minimal-host: \(error.message)\n".utf8))
            exit(error.kind == .tempFail ? 75 : 1)
        } catch {
            FileHandle.standardError.write(Data("minimal-host: \(error)\n".utf8))
            exit(1)
        }
    }
}
