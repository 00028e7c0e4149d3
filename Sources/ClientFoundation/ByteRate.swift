/// A rate of bytes per second as a person types it (`--download-rate 2MB/s`): a whole or
/// decimal number, then a unit, then an optional `/s`.
///
/// Units: `B`; `kB`/`KB`, `MB`, `GB` (powers of 1000); `KiB`, `MiB`, `GiB` (powers of
/// 1024); `kbit`, `Mbit`, `Gbit` (bits, powers of 1000, as link speeds are sold). The rate
/// is held as whole bytes per second, from 1 KiB/s to 10 GB/s.
public struct ByteRate: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Whole bytes per second.
    public let bytesPerSecond: Int64

    /// The slowest rate a device takes: below it a release would not arrive in a day.
    public static let minimum: Int64 = 1024
    /// The fastest rate a device takes.
    public static let maximum: Int64 = 10_000_000_000

    /// A rate of `bytesPerSecond`, held to ``minimum``…``maximum``.
    public init(bytesPerSecond: Int64) {
        self.bytesPerSecond = min(max(bytesPerSecond, Self.minimum), Self.maximum)
    }

    private static let units: [(name: String, bytes: Double)] = [
        ("B", 1), ("kB", 1000), ("KB", 1000), ("MB", 1e6), ("GB", 1e9),
        ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824),
        ("kbit", 125), ("Mbit", 125_000), ("Gbit", 125_000_000),
    ]

    /// Reads `text` (`2MB/s`, `500KiB/s`, `20 Mbit/s`); `nil` when it does not read or is out
    /// of range (``problem(_:)`` says why).
    public init?(parsing text: String) {
        guard case .success(let rate) = Self.read(text) else { return nil }
        self = rate
    }

    /// Why `text` is not a rate, in words that follow its name; `nil` when it is one.
    public static func problem(_ text: String) -> String? {
        if case .failure(let why) = read(text) { return why.message }
        return nil
    }

    private struct Refusal: Error { let message: String }

    private static func read(_ text: String) -> Result<ByteRate, Refusal> {
        let shown = Quoting.quoted(text)
        // Spaces around the whole text, the number, the unit and the `/s` are allowed.
        var body = Substring(text.trimmingSpaces())
        if body.hasSuffix("/s") { body = body.dropLast(2) }
        body = Substring(body.trimmingSpaces())
        let number = body.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unitText = String(body.dropFirst(number.count)).trimmingSpaces()
        guard number.contains(where: \.isNumber), number.filter({ $0 == "." }).count <= 1, let value = Double(number) else {
            return .failure(Refusal(message: "\(shown) is not a rate: a number then a unit, as in 2MB/s, 500KiB/s or 20Mbit/s"))
        }
        guard let unit = units.first(where: { $0.name == unitText }) else {
            return .failure(
                Refusal(message: "\(shown) has no known unit (B, kB, MB, GB, KiB, MiB, GiB, kbit, Mbit or Gbit, then an optional /s)"))
        }
        // Rounded to the nearest byte: a decimal such as 0.29MB is not exact in binary, and
        // rounding down would make it 289 999.
        let bytes = (value * unit.bytes).rounded()
        guard bytes.isFinite, bytes >= Double(minimum), bytes <= Double(maximum) else {
            return .failure(Refusal(message: "\(shown) is out of range (1KiB/s to 10GB/s)"))
        }
        return .success(ByteRate(bytesPerSecond: Int64(bytes)))
    }

    /// The rate in the largest binary unit it fills, as `2.0MiB/s`; bytes below 1 KiB.
    public var description: String {
        let value = Double(bytesPerSecond)
        for (name, size) in [("GiB", 1_073_741_824.0), ("MiB", 1_048_576.0), ("KiB", 1024.0)] where value >= size {
            let shown = (value / size * 10).rounded() / 10
            return "\(shown)\(name)/s"
        }
        return "\(bytesPerSecond)B/s"
    }
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
