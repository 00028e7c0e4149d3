import Synchronization

/// A small least-recently-used map shared between tasks: at most ``capacity`` entries,
/// the one used longest ago dropped first when a new one comes in.
///
/// For the answers of pure work on exact inputs (a key parsed from its PEM bytes, a
/// document verified from its bytes against given keys): the key must hold everything the
/// answer depends on, so a hit returns what the work would return again. Only successes
/// are stored by the callers here: what failed is worked out again, and refused again, at
/// every read.
package final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The most entries held.
    package let capacity: Int
    private let state: Mutex<State>

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Rises at every use; the entry with the lowest `used` goes first.
        var clock: UInt64 = 0
        /// Lookups answered from the map, and lookups that were not.
        var hits = 0
        var misses = 0
    }

    private struct Entry {
        var value: Value
        var used: UInt64
    }

    /// A cache of at most `capacity` entries (at least 1).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = Mutex(State())
    }

    /// The value stored for `key`, now the most recently used; nil when none is.
    package func value(for key: Key) -> Value? {
        state.withLock { s in
            s.clock &+= 1
            guard var entry = s.entries[key] else {
                s.misses += 1
                return nil
            }
            s.hits += 1
            entry.used = s.clock
            s.entries[key] = entry
            return entry.value
        }
    }

    /// Stores `value` for `key`, dropping the least recently used entry when the cache is full.
    package func insert(_ value: Value, for key: Key) {
        state.withLock { s in
            s.clock &+= 1
            if s.entries[key] == nil, s.entries.count >= capacity,
                let oldest = s.entries.min(by: { $0.value.used < $1.value.used })?.key
            {
                s.entries.removeValue(forKey: oldest)
            }
            s.entries[key] = Entry(value: value, used: s.clock)
        }
    }

    /// The value for `key`, computed by `make` and stored when the cache has none; a nil
    /// (or thrown) result is not stored. `make` runs outside the lock: two tasks missing
    /// the same key at once may both compute it, and both get the same answer.
    package func value(for key: Key, orMake make: () throws -> Value?) rethrows -> Value? {
        if let cached = value(for: key) { return cached }
        guard let made = try make() else { return nil }
        insert(made, for: key)
        return made
    }

    /// How many entries are held now (never more than ``capacity``).
    package var count: Int { state.withLock { $0.entries.count } }

    /// Lookups answered from the cache, and lookups that were not.
    package struct Statistics: Sendable, Equatable {
        package var hits: Int
        package var misses: Int

        package init(hits: Int, misses: Int) {
            self.hits = hits
            self.misses = misses
        }
    }

    /// Lookups answered from the cache, and lookups that were not, since it was made.
    package var statistics: Statistics { state.withLock { Statistics(hits: $0.hits, misses: $0.misses) } }

    /// True when an entry for `key` is held (does not count as a use).
    package func contains(_ key: Key) -> Bool { state.withLock { $0.entries[key] != nil } }
}
