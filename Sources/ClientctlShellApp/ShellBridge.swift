import ClientUpdater
import ServingCore
import ShellRules

/// The engine's ``HostBridge`` in the shell: a new base path loads that version into the
/// serving core behind the `app:` scheme (one pointer flip); a reload loads the app's start
/// page in the view, on the GTK main thread.
struct ShellBridge: HostBridge {
    let core: ServingCore
    let configuration: ServerConfiguration
    let view: ShellView
    /// Opened by the first base path: the view's first requests wait for it.
    let ready: FirstVersionLatch

    func setServerBasePath(_ path: String) async throws {
        core.version = try ServedVersion.load(
            directory: path, memoryCacheFileLimit: configuration.memoryCacheFileLimit,
            memoryCacheTotalLimit: configuration.memoryCacheTotalLimit)
        ready.open()
    }

    func reload() async throws {
        let view = view
        await GMain.run { view.loadApp() }
    }
}
