import Foundation

/// A collector's `--database`: `sqlite:/path/to/file.db` or `postgres://user@host:port/db`
/// (also `postgresql://`, with `?sslmode=disable`).
public enum DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    /// An SQLite file (created when missing; WAL).
    case sqlite(path: String)
    /// A PostgreSQL server, the URL as given.
    case postgres(URLComponents)

    /// Parses a `--database` value.
    /// - Throws: ``FleetCollectorError`` `.badDatabaseURL` naming why.
    public init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty, !path.contains("\0") else {
                throw FleetCollectorError(.badDatabaseURL, "--database \(text): no file after sqlite: (sqlite:/path/to/reports.db)")
            }
            self = .sqlite(path: path)
            return
        }
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw FleetCollectorError(.badDatabaseURL, "--database: \"\(text.prefix(80))\" is neither sqlite:PATH nor postgres://USER@HOST:PORT/DB")
        }
        guard let host = url.host, !host.isEmpty else {
            throw FleetCollectorError(.badDatabaseURL, "--database: the postgres URL names no host")
        }
        self = .postgres(url)
    }

    /// The URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:" + path
        case .postgres(var url):
            if url.password != nil { url.password = "***" }
            return url.string ?? "postgres://"
        }
    }
}
