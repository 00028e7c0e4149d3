import ArgumentParser
import ClientUpdater
import DeviceSetup

/// Where the shell's page lives (`--origin`, docs/native-shell.md#origins-app-or-loopback-http).
enum ShellOrigin: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// `app://<appId>/`, the default: no port at all (``AppScheme``).
    case app
    /// `http://127.0.0.1:PORT/`, answering the shell's own view only (``LoopbackOrigin``):
    /// for apps that derive `ws:`/`http:` URLs from their origin or need service workers.
    case loopback
}

extension ShellOrigin {
    /// `--origin` when given, else a packaged app's template's origin, else `app`.
    /// - Throws: ``ShellError`` `.invalidArgument` for `--port` when the origin chosen is `app`.
    static func chosen(flag: ShellOrigin?, template: DeviceTemplate?, port: Int?) throws -> ShellOrigin {
        let origin = flag ?? template?.origin.flatMap(ShellOrigin.init(rawValue:)) ?? .app
        if port != nil, origin != .loopback {
            throw ShellError(.invalidArgument, "--port needs --origin loopback (the template's origin is app)")
        }
        return origin
    }
}
