import ClientUpdater

/// The `HostBridge` of `clientctl serve`: switching the base path is the server's
/// pointer flip. Pages reload themselves (the shim does after `switchToPendingVersion`),
/// so `reload()` has nothing to do on the server side.
public struct ServerBridge: HostBridge {
    public let server: ClientServer

    public init(_ server: ClientServer) {
        self.server = server
    }

    public func setServerBasePath(_ path: String) async throws {
        try server.activate(servingDirectory: path)
    }

    public func reload() async throws {}
}
