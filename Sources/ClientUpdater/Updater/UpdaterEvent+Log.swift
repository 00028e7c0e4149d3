import Logging

extension UpdaterEvent {
    /// The level an ``Updater`` logs this event at. Never `warning` or above: a library
    /// reports failures to its host through thrown errors and the event stream, and its
    /// log is for diagnosis (`clientctl` shows it on stderr with `CLIENTCTL_LOG_LEVEL`).
    var logLevel: Logger.Level {
        switch self {
        case .error: return .notice
        case .downloadProgress: return .trace
        case .installNote: return .debug
        default: return .info
        }
    }

    /// One line for the log.
    var logMessage: Logger.Message {
        switch self {
        case .updateAvailable(let version): return "update available: \(version) is pending"
        case .error(let message): return "\(message)"
        case .downloadProgress(let version, let completed, let total):
            return "downloading \(version): \(completed) of \(total.map(String.init) ?? "?") bytes"
        case .installNote(let note): return "\(note)"
        case .watchdog(let event): return "watchdog: \(event.message)"
        case .switched(let version): return "now serving \(version)"
        }
    }
}
