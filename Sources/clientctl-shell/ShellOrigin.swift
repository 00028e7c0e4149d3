import ArgumentParser

/// Where the shell's page lives (`--origin`, docs/native-shell.md#origins-app-or-loopback-http).
enum ShellOrigin: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// `app://<appId>/`, the default: no port at all (``AppScheme``).
    case app
    /// `http://127.0.0.1:PORT/`, answering the shell's own view only (``LoopbackOrigin``):
    /// for apps that derive `ws:`/`http:` URLs from their origin or need service workers.
    case loopback
}
