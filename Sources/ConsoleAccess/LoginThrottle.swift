import ClientFoundation
import Foundation
import Synchronization

/// How often the console lets anyone try a password: per name, and per address, each a
/// token bucket (ClientFoundation's `TokenBucket`) on readings of a monotonic clock.
///
/// By default a name gets 5 attempts, then 1 every 30 seconds; an address gets 20, then 1
/// every 6 seconds. An IPv6 address counts by its /64 (one host usually holds a whole
/// /64), an IPv4-mapped one as its IPv4 address.
///
/// ``check(name:address:now:)`` counts the attempt it allows right away, so many attempts
/// sent at once cannot all pass before the first one's password is checked. ``failed(name:address:now:)``
/// then adds nothing more; ``succeeded(name:address:now:)`` forgets the name's attempts
/// (the right password proves the person), never the address's.
///
/// Memory is bounded: at most ``capacity`` names and as many addresses are remembered; past
/// that, the ones whose bucket is full again go first, then the ones used longest ago.
public final class LoginThrottle: Sendable {
    /// A bucket's shape: `burst` attempts, then one every `interval`.
    public struct Rule: Sendable, Equatable {
        /// Attempts allowed at once.
        public var burst: Int
        /// Time that earns one more attempt.
        public var interval: Duration

        /// `burst` attempts (at least 1), then one every `interval`.
        public init(burst: Int, interval: Duration) {
            self.burst = max(1, burst)
            self.interval = interval > .zero ? interval : .seconds(1)
        }

        /// 5 attempts, then 1 every 30 seconds.
        public static let perName = Rule(burst: 5, interval: .seconds(30))
        /// 20 attempts, then 1 every 6 seconds.
        public static let perAddress = Rule(burst: 20, interval: .seconds(6))

        var bucket: TokenBucket { TokenBucket(capacity: Double(burst), refill: 1, every: interval) }
    }

    private struct Entry {
        var bucket: TokenBucket
        /// Attempts ``check`` counted whose outcome was not reported yet.
        var pending = 0
        var lastUsed: Duration
    }

    private struct State {
        var names: [String: Entry] = [:]
        var addresses: [String: Entry] = [:]
    }

    /// The rule for each name.
    public let nameRule: Rule
    /// The rule for each address.
    public let addressRule: Rule
    /// The most names (and the most addresses) remembered.
    public let capacity: Int

    private let state = Mutex(State())

    /// A throttle with these rules, remembering at most `capacity` names and as many addresses.
    public init(perName: Rule = .perName, perAddress: Rule = .perAddress, capacity: Int = 10_000) {
        nameRule = perName
        addressRule = perAddress
        self.capacity = max(1, capacity)
    }

    /// Whether `name` may try a password from `address` at the reading `now`: nil when it may
    /// (and the attempt is counted), else how long until it may (an HTTP 429's Retry-After;
    /// ``retryAfterSeconds(_:)`` rounds it up to whole seconds).
    public func check(name: String, address: String, now: Duration) -> Duration? {
        let nameKey = Self.nameKey(name)
        let addressKey = Self.addressKey(address)
        return state.withLock { state in
            let waits = [
                Self.wait(state.addresses[addressKey], now: now), Self.wait(state.names[nameKey], now: now),
            ].compactMap { $0 }
            if let longest = waits.max() { return longest }
            take(&state.addresses, addressKey, rule: addressRule, now: now)
            take(&state.names, nameKey, rule: nameRule, now: now)
            return nil
        }
    }

    /// Reports that `name`'s password from `address` was wrong (or the name unknown). An
    /// attempt ``check(name:address:now:)`` allowed is counted already; one it was not asked
    /// about is counted now.
    public func failed(name: String, address: String, now: Duration) {
        let nameKey = Self.nameKey(name)
        let addressKey = Self.addressKey(address)
        state.withLock { state in
            settle(&state.addresses, addressKey, rule: addressRule, now: now)
            settle(&state.names, nameKey, rule: nameRule, now: now)
        }
    }

    /// Reports that `name` logged in from `address`: the name's attempts are forgotten; the
    /// address's stay counted (one account's owner cannot buy guesses at others).
    public func succeeded(name: String, address: String, now: Duration) {
        let nameKey = Self.nameKey(name)
        let addressKey = Self.addressKey(address)
        state.withLock { state in
            state.names[nameKey] = nil
            if var entry = state.addresses[addressKey], entry.pending > 0 {
                entry.pending -= 1
                state.addresses[addressKey] = entry
            }
        }
    }

    /// `wait` in whole seconds, rounded up, at least 1: a `Retry-After` header's value.
    public static func retryAfterSeconds(_ wait: Duration) -> Int {
        let (seconds, attoseconds) = wait.components
        return max(1, Int(clamping: seconds) + (attoseconds > 0 ? 1 : 0))
    }

    /// How many names and addresses are remembered now.
    public var remembered: (names: Int, addresses: Int) {
        state.withLock { ($0.names.count, $0.addresses.count) }
    }

    // MARK: - Buckets

    private static func wait(_ entry: Entry?, now: Duration) -> Duration? {
        guard var bucket = entry?.bucket else { return nil }
        return bucket.take(1, at: now).map(wholeMilliseconds)
    }

    /// `wait` rounded up to whole milliseconds, less a microsecond first: the bucket counts
    /// in doubles, and 20 s must not come out as 20.000000001 s (a Retry-After of 21).
    static func wholeMilliseconds(_ wait: Duration) -> Duration {
        let (seconds, attoseconds) = wait.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return wait }
        let total = nanoseconds.partialValue + attoseconds / 1_000_000_000 - 1000
        return .milliseconds(max(1, (total + 999_999) / 1_000_000))
    }

    private func take(_ table: inout [String: Entry], _ key: String, rule: Rule, now: Duration) {
        var entry = table[key] ?? Entry(bucket: rule.bucket, lastUsed: now)
        _ = entry.bucket.take(1, at: now)
        entry.pending += 1
        entry.lastUsed = max(entry.lastUsed, now)
        store(&table, key, entry, now: now)
    }

    private func settle(_ table: inout [String: Entry], _ key: String, rule: Rule, now: Duration) {
        var entry = table[key] ?? Entry(bucket: rule.bucket, lastUsed: now)
        if entry.pending > 0 {
            entry.pending -= 1
        } else {
            _ = entry.bucket.spend(1, at: now)
        }
        entry.lastUsed = max(entry.lastUsed, now)
        store(&table, key, entry, now: now)
    }

    /// Stores `entry`, first making room when the table is full: the entries whose bucket is
    /// full again (they hold nothing a fresh one would not) go, then the oldest tenth.
    private func store(_ table: inout [String: Entry], _ key: String, _ entry: Entry, now: Duration) {
        if table[key] == nil, table.count >= capacity {
            table = table.filter { item in
                var bucket = item.value.bucket
                return item.value.pending > 0 || bucket.take(bucket.capacity, at: now) != nil
            }
            if table.count >= capacity {
                let oldest = table.sorted { $0.value.lastUsed < $1.value.lastUsed }.prefix(max(1, capacity / 10))
                for item in oldest { table[item.key] = nil }
            }
        }
        table[key] = entry
    }

    // MARK: - Keys

    /// A name as its bucket's key: as given, cut to 128 bytes (no operator's name is longer
    /// than 64, so a longer one can only be a guess).
    static func nameKey(_ name: String) -> String {
        String(decoding: name.utf8.prefix(128), as: UTF8.self)
    }

    /// An address as its bucket's key: IPv4 as is, IPv6 by its /64 prefix (`2001:db8:1:2::/64`),
    /// an IPv4-mapped IPv6 address as its IPv4; anything else as given, cut to 64 bytes.
    static func addressKey(_ address: String) -> String {
        var trimmed = Substring(address)
        if trimmed.hasPrefix("["), trimmed.hasSuffix("]") { trimmed = trimmed.dropFirst().dropLast() }
        if let zone = trimmed.firstIndex(of: "%") { trimmed = trimmed[..<zone] }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(trimmed), &v4) == 1 { return String(trimmed) }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(trimmed), &v6) == 1 else {
            return String(decoding: address.utf8.prefix(64), as: UTF8.self)
        }
        let bytes = withUnsafeBytes(of: v6) { [UInt8]($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
