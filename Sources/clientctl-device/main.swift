import ClientctlShellApp
import DeviceCommands

// One program, two commands, chosen by the name it is called by (as busybox does):
// `clientctl-shell` (a link to this file in a packaged app) runs the shell, on the main
// thread before anything else, so GTK owns it; every other name runs the device's
// `clientctl` (device commands only: nothing of the release side is linked in).
let calledAs = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
if calledAs == "clientctl-shell" {
    ShellMain.run()
} else {
    await DeviceMain.run()
}
