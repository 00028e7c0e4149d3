import ClientFoundation
import Foundation

/// Reads whether the link is metered from NetworkManager's own answer: the `Metered`
/// property of `org.freedesktop.NetworkManager` on the system bus (an `NMMetered`: 0
/// unknown, 1 yes, 2 no, 3 guess-yes, 4 guess-no), read with `dbus-send` as NetworkManager's
/// D-Bus API documents it (docs/download-policy.md#metered-links). Yes and guess-yes count
/// as metered, as NetworkManager's documentation advises; no and guess-no do not.
///
/// When NetworkManager cannot tell (no system bus, not running, no answer within
/// ``timeout``, `Metered` unknown), the probe answers with the settings override: metered
/// when the default route's interface (from `/proc/net/route`) is one of
/// ``meteredInterfaces``, else not metered. ``LinkReading/source`` says which.
package struct NetworkManagerProbe: MeteredLinkProbe {
    /// The interfaces the device's settings name metered (`meteredInterfaces`).
    package var meteredInterfaces: [String]
    /// The kernel's IPv4 routing table: its default route names the interface in use.
    package var routeFile = "/proc/net/route"
    /// The system bus the child asks (`DBUS_SYSTEM_BUS_ADDRESS`); nil: the machine's.
    package var busAddress: String?
    /// How long NetworkManager has to answer before the probe answers without it.
    package var timeout: Duration = .seconds(2)
    /// The `dbus-send` to run (a name looked up in `PATH`, or a path).
    package var dbusSend = "dbus-send"

    /// A probe asking the machine's NetworkManager, with `meteredInterfaces` as its override.
    package init(meteredInterfaces: [String]) {
        self.meteredInterfaces = meteredInterfaces
    }

    /// NetworkManager's answer, else the override's; never longer than about ``timeout``.
    package func read() async -> LinkReading {
        switch await askNetworkManager() {
        case .answer(let metered, let value):
            return LinkReading(metered: metered, source: "NetworkManager: Metered=\(value)")
        case .cannotTell(let why):
            return override(because: "NetworkManager: \(why)")
        }
    }

    /// What NetworkManager said, or why it could not tell.
    enum Answer: Equatable {
        case answer(metered: Bool, value: String)
        case cannotTell(String)
    }

    func askNetworkManager() async -> Answer {
        let milliseconds = max(1, timeout.inMilliseconds)
        var child = ChildProcess(
            dbusSend,
            [
                "--system", "--print-reply=literal", "--reply-timeout=\(milliseconds)",
                "--dest=org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
                "org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.NetworkManager", "string:Metered",
            ],
            standardOutput: .memory(cap: 4096), standardError: .memory(cap: 4096),
            // dbus-send's own reply timeout ends it first; this bounds a bus that never lets it connect.
            timeout: timeout + .milliseconds(500))
        if let busAddress { child.environment["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress }
        let ran: ChildProcess.Result
        do {
            ran = try await child.run()
        } catch {
            return .cannotTell("\(dbusSend) is not installed")
        }
        if ran.timedOut { return .cannotTell("no answer within \(milliseconds) ms") }
        let output = String(decoding: ran.standardOutput, as: UTF8.self)
        guard ran.termination == .exited(0) else {
            return .cannotTell(Self.failure(String(decoding: ran.standardError, as: UTF8.self), within: milliseconds))
        }
        return Self.parse(output)
    }

    /// `dbus-send --print-reply=literal`'s answer: `variant       uint32 1`.
    static func parse(_ output: String) -> Answer {
        let words = output.split(whereSeparator: \.isWhitespace)
        guard words.count >= 2, words[words.count - 2] == "uint32", let value = UInt32(words[words.count - 1]) else {
            return .cannotTell("Metered is not a uint32 in its answer")
        }
        switch value {
        case 1: return .answer(metered: true, value: "yes")
        case 2: return .answer(metered: false, value: "no")
        case 3: return .answer(metered: true, value: "yes (guessed)")
        case 4: return .answer(metered: false, value: "no (guessed)")
        case 0: return .cannotTell("Metered=unknown")
        default: return .cannotTell("Metered=\(value), not an NMMetered value")
        }
    }

    /// Why `dbus-send` failed, in a few words.
    static func failure(_ standardError: String, within milliseconds: Int64) -> String {
        if standardError.contains("ServiceUnknown") || standardError.contains("NameHasNoOwner") { return "not running" }
        if standardError.contains("NoReply") || standardError.contains("Timeout") { return "no answer within \(milliseconds) ms" }
        if standardError.contains("Failed to open connection") { return "no system bus" }
        let line = standardError.split(separator: "\n").first.map(String.init) ?? "dbus-send failed"
        return Quoting.escaped(line, limit: 120)
    }

    /// The settings' answer, after NetworkManager could not tell (`why`).
    func override(because why: String) -> LinkReading {
        guard !meteredInterfaces.isEmpty else { return LinkReading(metered: false, source: "\(why); not metered") }
        guard let text = try? String(contentsOfFile: routeFile, encoding: .utf8) else {
            return LinkReading(metered: false, source: "\(why); \(routeFile) unreadable: not metered")
        }
        guard let interface = Self.defaultRouteInterface(text) else {
            return LinkReading(metered: false, source: "\(why); no default route: not metered")
        }
        let quoted = Quoting.quoted(interface)
        if meteredInterfaces.contains(interface) {
            return LinkReading(metered: true, source: "settings: \(quoted) is named metered (\(why))")
        }
        return LinkReading(metered: false, source: "settings: \(quoted) is not named metered (\(why))")
    }

    /// The interface of the default route in `/proc/net/route`'s text (the lowest metric's
    /// when there are several), nil when there is none. Columns: `Iface Destination Gateway
    /// Flags RefCnt Use Metric Mask …`, addresses and flags in hex.
    static func defaultRouteInterface(_ text: String) -> String? {
        var best: (interface: String, metric: Int)?
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                let flags = Int(fields[3], radix: 16), flags & 0x1 != 0, let metric = Int(fields[6])
            else { continue }
            if best == nil || metric < best?.metric ?? Int.max { best = (String(fields[0]), metric) }
        }
        return best?.interface
    }
}

/// The metered-link probes a host builds.
package enum MeteredLinkProbes {
    /// A device's probe: NetworkManager's `Metered`, with the settings' `meteredInterfaces`
    /// as the override when NetworkManager cannot tell.
    package static func device(meteredInterfaces: [String]) -> any MeteredLinkProbe {
        NetworkManagerProbe(meteredInterfaces: meteredInterfaces)
    }
}
