import ArgumentParser
import FleetCollector

/// `collect --listen`: `HOST:PORT` or `[V6]:PORT`.
enum ListenArgument {
    /// The host and port of `text`, or nil when it is not `HOST:PORT` with a port 0–65535.
    static func hostPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("["), host.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 }) else { return nil }
        return (host, port)
    }
}

/// `--admission`: `open`, `listed` or `manual`.
struct AdmissionArgument: ExpressibleByArgument, Sendable {
    var mode: AdmissionMode

    init(mode: AdmissionMode) { self.mode = mode }

    init?(argument: String) {
        guard let mode = AdmissionMode(rawValue: argument) else { return nil }
        self.mode = mode
    }

    var defaultValueDescription: String { mode.rawValue }
    static var allValueStrings: [String] { AdmissionMode.allCases.map(\.rawValue) }
}
