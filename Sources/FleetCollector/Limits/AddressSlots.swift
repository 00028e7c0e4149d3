import Prometheus
import Synchronization

/// At most `limit` places per source address at once (open connections, or bodies being
/// read), so that one address cannot take every place the collector has. Memory is one
/// entry per address that holds a place now.
public final class AddressSlots: Sendable {
    /// The places of one address.
    public let limit: Int
    private let held = Mutex<[String: Int]>([:])

    /// Slots of `limit` places per address.
    public init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a place for `address`; `false` when it holds all of its places.
    public func enter(_ address: String) -> Bool {
        held.withLock { held in
            let n = held[address, default: 0]
            guard n < limit else { return false }
            held[address] = n + 1
            return true
        }
    }

    /// Gives a place of `address` back.
    public func leave(_ address: String) {
        held.withLock { held in
            let n = held[address, default: 0] - 1
            held[address] = n > 0 ? n : nil
        }
    }

    /// The places `address` holds now.
    public func holding(_ address: String) -> Int { held.withLock { $0[address, default: 0] } }
}

/// The per-address connection cap: each connection takes a place of its source address
/// when it opens and gives it back when it closes; one over the cap is closed at once,
/// before anything is read from it, and counted in
/// `fleet_collector_connections_refused_total`.
public final class ConnectionLimit: Sendable {
    /// The places per address.
    public let slots: AddressSlots
    let refused: Counter

    /// A cap of `perAddress` connections, counted in `registry`.
    public init(perAddress: Int, registry: PrometheusCollectorRegistry) {
        slots = AddressSlots(limit: perAddress)
        refused = registry.makeCounter(
            descriptor: CollectorMetrics.descriptor(
                "fleet_collector_connections_refused_total",
                help: "Connections closed as they opened: their source address held as many as --connections-per-address allows."))
    }

    /// A handler for a new connection's pipeline.
    func handler() -> ConnectionLimitHandler { ConnectionLimitHandler(limit: self) }
}
