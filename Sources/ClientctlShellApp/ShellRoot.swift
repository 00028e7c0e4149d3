import ClientEngine
import ClientUpdater
import DeviceSetup
import Foundation

/// The root a shell run opens: `--root`, else `$CLIENTCTL_ROOT`, or with `--template` the
/// user's root of the packaged app, made or kept from the template before it is opened
/// (docs/packaging.md#first-run-and-upgrades).
struct ShellRoot {
    let path: String
    let template: DeviceTemplate?

    /// Resolves the root and applies the template (waiting for it on this thread: the
    /// shell has no window yet). A broken template beside an existing root is reported on
    /// stderr and the root is used as it is.
    static func prepare(_ options: ShellCommand) throws -> ShellRoot {
        guard let folder = options.template else { return ShellRoot(path: try DeviceEngine.rootPath(options.root), template: nil) }
        let root = try TemplateRoot.rootPath(explicit: options.root, template: folder)
        let result = Blocking.wait { try await TemplateRoot.prepare(template: folder, root: root) }
        let (outcome, template) = try result.get()
        switch outcome {
        case .created: ShellRun.printError("created \(root) from \(folder)")
        case .shellUpdated(let from, let to): ShellRun.printError("shell \(from) → \(to): \(root) follows the installed package")
        case .templateRefused(let why): ShellRun.printError("\(why); \(root) is used as it is")
        case .unchanged: break
        }
        return ShellRoot(path: root, template: template)
    }
}

/// Runs async work to its end from synchronous code that owns its thread (before GTK's loop).
enum Blocking {
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, any Error> = .failure(CancellationError())
        Task {
            do { result = .success(try await body()) } catch { result = .failure(error) }
            done.signal()
        }
        done.wait()
        return result
    }
}
