import ClientFoundation

extension OperatorFile {
    /// Two threads of their own for scrypt: a login never holds an event loop or a thread
    /// of Swift concurrency's pool for its 70 ms, and however many logins come at once, at
    /// most two hash at a time (64 MiB), the rest wait their turn.
    static let hashing = BlockingExecutor(threads: 2)

    /// ``authenticate(name:password:)`` on the console's two hashing threads, suspending
    /// the caller meanwhile: what a server's request handler calls.
    public func authenticated(name: String, password: [UInt8]) async -> OperatorAccount? {
        let file = self
        return (try? await Self.hashing.run { file.authenticate(name: name, password: password) }) ?? nil
    }
}
