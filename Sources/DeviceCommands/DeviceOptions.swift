import ArgumentParser
import ClientEngine
import ClientFoundation
import ClientUpdater
import Foundation

/// `--root`, shared by every device command; defaults to `$CLIENTCTL_ROOT`.
struct DeviceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Device root folder (default: $CLIENTCTL_ROOT).", valueName: "DIR"))
    var root: String?

    /// The root's layout, from `--root` or `CLIENTCTL_ROOT`.
    func layout() throws -> RootLayout {
        RootLayout(root: try DeviceEngine.rootPath(root))
    }
}
