import ClientFoundation
import Foundation

/// When and over which links a device downloads a release (docs/download-policy.md): apart
/// from the apply policy, which decides when a downloaded release *runs*.
///
/// - ``windows``: the download windows, the grammar and zones of ``MaintenanceWindow``; empty:
///   any time of day.
/// - ``rate``: the cap on the archive's and patch's bytes per second (the transport keeps it);
///   `nil`: no cap.
/// - ``metered``: what a metered link allows (``MeteredAllowance``); ``MeteredAllowance/always``
///   by default, so a device that sets nothing downloads as it always did.
///
/// The decision is pure (``decide(_:)``): the caller reads the clock, the link and the holds.
package struct DownloadPolicy: Sendable, Equatable {
    /// The download windows; empty: any time.
    package var windows: [MaintenanceWindow]
    /// The rate cap; `nil`: none.
    package var rate: ByteRate?
    /// What a metered link allows.
    package var metered: MeteredAllowance

    /// A policy; the defaults are a device that set nothing: any time, no cap, every link.
    package init(windows: [MaintenanceWindow] = [], rate: ByteRate? = nil, metered: MeteredAllowance = .always) {
        self.windows = windows
        self.rate = rate
        self.metered = metered
    }

    /// True when the policy defers nothing and caps nothing.
    package var isUnrestricted: Bool { windows.isEmpty && rate == nil && metered == .always }
}

/// What a metered link (a cellular uplink, a hotspot) allows a device to download.
///
/// Text forms: `never`, `always`, `patches:SIZE`. SIZE is a whole or decimal number and a
/// unit: `B`, `kB`/`KB`, `MB`, `GB` (powers of 1000) or `KiB`, `MiB`, `GiB` (powers of 1024);
/// a bare number is bytes. `patches:5MB` is 5 000 000 bytes, `patches:512KiB` 524 288. The size
/// is from 1 KiB to 1 TB.
package enum MeteredAllowance: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Nothing over a metered link: the download waits for another link.
    case never
    /// A patch of at most this many bytes; a full archive, or a bigger patch, waits.
    case patches(upTo: Int64)
    /// Everything, as over any link (the default).
    case always

    /// The smallest SIZE `patches:` takes.
    package static let minimumPatchBytes: Int64 = 1024
    /// The largest SIZE `patches:` takes.
    package static let maximumPatchBytes: Int64 = 1_000_000_000_000

    private static let units: [(name: String, bytes: Double)] = [
        ("B", 1), ("kB", 1000), ("KB", 1000), ("MB", 1e6), ("GB", 1e9),
        ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824),
    ]

    /// Reads `never`, `always` or `patches:SIZE`.
    /// - Throws: ``ApplyPolicyError`` `.invalidDownloadPolicy` naming the text and the forms.
    package init(parsing text: String) throws {
        let shown = Quoting.quoted(text)
        let forms = "never, always or patches:SIZE (as in patches:5MB)"
        switch text {
        case "never": self = .never
        case "always": self = .always
        default:
            guard text.hasPrefix("patches:") else {
                throw ApplyPolicyError(code: .invalidDownloadPolicy, message: "metered \(shown) is not \(forms)")
            }
            self = .patches(upTo: try Self.size(String(text.dropFirst("patches:".count)), whole: shown))
        }
    }

    /// SIZE of `patches:SIZE` in bytes.
    private static func size(_ text: String, whole shown: String) throws -> Int64 {
        let number = text.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unitText = String(text.dropFirst(number.count))
        guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, let value = Double(number), value.isFinite else {
            throw ApplyPolicyError(
                code: .invalidDownloadPolicy, message: "metered \(shown) has no size: patches:SIZE is a number then a unit, as in patches:5MB")
        }
        let unit: Double
        if unitText.isEmpty {
            unit = 1
        } else if let known = units.first(where: { $0.name == unitText }) {
            unit = known.bytes
        } else {
            throw ApplyPolicyError(
                code: .invalidDownloadPolicy,
                message: "metered \(shown) has no known size unit (B, kB, MB, GB, KiB, MiB or GiB, as in patches:5MB)")
        }
        let bytes = (value * unit).rounded(.down)
        guard bytes >= Double(minimumPatchBytes), bytes <= Double(maximumPatchBytes) else {
            throw ApplyPolicyError(code: .invalidDownloadPolicy, message: "metered \(shown) is out of range (patches of 1KiB to 1TB)")
        }
        return Int64(bytes)
    }

    /// `never`, `always` or `patches:BYTES` (the size in bytes, so it reads back the same).
    package var description: String {
        switch self {
        case .never: "never"
        case .always: "always"
        case .patches(let bytes): "patches:\(bytes)B"
        }
    }
}

extension DownloadPolicy {
    /// Reads a device's settings as typed: windows (`02:00-05:00`, `22:00-06:00@Europe/Berlin`)
    /// in `zone` when they name none, a rate (``ByteRate``), a metered mode.
    /// - Throws: ``ApplyPolicyError``: `.invalidWindow`/`.invalidTimeZone` for a window (its
    ///   message names it a download window), `.invalidDownloadPolicy` for the rate or mode.
    package init(windows: [String], zone: String?, defaultZone: TimeZone, rate: String?, metered: String?) throws {
        var read: [MaintenanceWindow] = []
        for text in windows {
            do {
                read.append(try MaintenanceWindow(parsing: text, timeZone: text.contains("@") ? nil : zone, defaultZone: defaultZone))
            } catch let error as ApplyPolicyError {
                throw ApplyPolicyError(code: error.code, message: Self.downloadWording(error.message))
            }
        }
        var cap: ByteRate?
        if let rate {
            if let problem = ByteRate.problem(rate) {
                throw ApplyPolicyError(code: .invalidDownloadPolicy, message: "download rate \(problem)")
            }
            cap = ByteRate(parsing: rate)
        }
        self.init(windows: read, rate: cap, metered: try metered.map(MeteredAllowance.init(parsing:)) ?? .always)
    }

    /// A window's refusal worded for a download window.
    static func downloadWording(_ message: String) -> String {
        message.replacingOccurrences(of: "apply window", with: "download window")
    }
}
