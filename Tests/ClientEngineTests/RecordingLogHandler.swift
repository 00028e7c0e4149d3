import Logging
import Synchronization

/// A swift-log handler that keeps every line it is given, for a test to read (a fake: a
/// host's own handler, as a host would write one).
struct RecordingLogHandler: LogHandler {
    /// The lines, shared by every copy of the handler (a `Logger` copies its handler).
    final class Lines: Sendable {
        private let lines = Mutex<[(level: Logger.Level, message: String)]>([])

        func append(_ level: Logger.Level, _ message: String) { lines.withLock { $0.append((level, message)) } }

        var all: [(level: Logger.Level, message: String)] { lines.withLock { $0 } }
    }

    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { lines.append(event.level, "\(event.message)") }
}
