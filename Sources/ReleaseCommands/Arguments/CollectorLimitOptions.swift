import ArgumentParser
import CommandSupport
import FleetCollector

/// `collect`'s limits on each connection and each source address: how long one may stay
/// silent, how many may be open and read at once, how slowly a body may arrive
/// (docs/fleet-reports.md#the-collector).
struct CollectorLimitOptions: ParsableArguments {
    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Seconds a connection may stay silent, between requests or inside one.", valueName: "SECONDS"))
    var idleTimeout = Seconds(30)

    @Option(
        name: .customLong("connections-per-address"),
        help: ArgumentHelp("Connections open at once from one source address; more are closed as they open (1–1024).", valueName: "N"))
    var connectionsPerAddress = 32

    @Option(
        name: .customLong("reads-per-address"),
        help: ArgumentHelp("Batch bodies read at once from one source address; more get 429 (1–1024).", valueName: "N"))
    var readsPerAddress = 8

    @Option(
        name: .customLong("body-min-rate"),
        help: ArgumentHelp("The slowest pace of a batch's body after its first 5 s, bytes a second; slower is cut off (0: none).", valueName: "BYTES")
    )
    var bodyMinRate = 1024

    /// Refuses a limit out of its range; called by `collect`'s `validate()` in its order.
    /// - Throws: `ValidationError` naming the flag and its range.
    func check() throws {
        try idleTimeout.require(in: 1...3600, flag: "--idle-timeout", rule: "1 to 3600 seconds")
        for (flag, n) in [("--connections-per-address", connectionsPerAddress), ("--reads-per-address", readsPerAddress)]
        where !(1...1024).contains(n) {
            throw ValidationError("\(flag) \(n) is out of range: 1 to 1024")
        }
        guard (0...1_048_576).contains(bodyMinRate) else {
            throw ValidationError("--body-min-rate \(bodyMinRate) is out of range: 0 to 1048576 bytes a second")
        }
    }

    /// Sets the limits but the idle timeout (the configuration's initializer takes it).
    func apply(to configuration: inout CollectorConfiguration) {
        configuration.connectionsPerAddress = connectionsPerAddress
        configuration.readsPerAddress = readsPerAddress
        configuration.minBodyBytesPerSecond = bodyMinRate
    }
}
