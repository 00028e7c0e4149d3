import Foundation
import Logging

/// The one reading of `CLIENTCTL_LOG_LEVEL` (any swift-log level: `trace`, `debug`, `info`,
/// `notice`, …), for `clientctl`, `clientctl serve` and the shell alike
/// (docs/concurrency.md#logging).
package enum EngineLogging {
    /// The level `CLIENTCTL_LOG_LEVEL` names, or nil when it is unset or names none.
    package static func level(environment: [String: String] = ProcessInfo.processInfo.environment) -> Logger.Level? {
        environment["CLIENTCTL_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) }
    }

    /// The engine's log on stderr, apart from a program's own lines: at `warning` (which the
    /// engine never reaches: nothing is added to a program's output) unless
    /// `CLIENTCTL_LOG_LEVEL` names another level.
    package static func engineLogger(environment: [String: String] = ProcessInfo.processInfo.environment) -> Logger {
        var logger = Logger(label: "clientctl.engine", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = level(environment: environment) ?? .warning
        return logger
    }
}
