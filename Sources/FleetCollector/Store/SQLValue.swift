/// A value of the portable SQL both stores run: what ``ReportSQL`` binds and what
/// ``SQLQuerying`` returns, whatever the driver.
public enum SQLValue: Sendable, Equatable {
    /// An integer (SQLite INTEGER, PostgreSQL BIGINT/INTEGER/SMALLINT).
    case integer(Int64)
    /// Text.
    case text(String)
    /// NULL.
    case null

    /// The integer, when it is one.
    public var integer: Int64? {
        if case .integer(let n) = self { return n }
        return nil
    }

    /// The text, when it is text.
    public var text: String? {
        if case .text(let s) = self { return s }
        return nil
    }

    /// `.text(s)` or `.null`.
    public static func optional(_ s: String?) -> SQLValue { s.map { .text($0) } ?? .null }

    /// `.integer(n)` or `.null`.
    public static func optional(_ n: Int64?) -> SQLValue { n.map { .integer($0) } ?? .null }
}

/// A store that can run one read query of the shared SQL text: what ``FleetSummaryQuery``
/// builds a summary on.
public protocol SQLQuerying: Sendable {
    /// Runs `sql` (with `?` placeholders, in order) and returns its rows, each a list of
    /// column values.
    func query(_ sql: String, _ arguments: [SQLValue]) async throws -> [[SQLValue]]
}
