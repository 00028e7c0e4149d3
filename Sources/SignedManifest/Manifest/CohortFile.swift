import ClientFoundation
import DeviceIdentity
import DeviceTargeting
import Foundation
import StrictJSON

/// A cohort a manifest names (`cohorts`; docs/targeting.md#cohorts): the devices listed in
/// `cohorts/<name>/<sha256>.txt` beside the channel's `manifest.json`, bound by its SHA-256
/// and its count, so the file needs no signature of its own, never changes once written
/// (a CDN may keep it forever, and releases offered side by side may name different
/// versions of one cohort), and a device reads it only when a target's answer depends on it.
public struct CohortReference: Sendable, Equatable, Hashable {
    /// The cohort's name, as `id in cohort NAME` writes it (the label key grammar).
    public var name: String
    /// SHA-256 (lowercase hex) of the cohort file's bytes.
    public var digest: String
    /// How many device ids the file lists.
    public var count: Int

    /// Most cohorts one manifest names.
    public static let maxCount = 16

    public init(name: String, digest: String, count: Int) {
        self.name = name
        self.digest = digest
        self.count = count
    }

    /// The reference to the cohort file `bytes` (canonical: ``CohortFile/canonical(text:source:)``).
    public init(name: String, file bytes: [UInt8]) {
        self.init(name: name, digest: Digest.hex(.sha256, of: bytes), count: bytes.count / CohortFile.recordBytes)
    }

    /// The path of the file relative to the channel's `manifest.json`.
    public var path: String { "cohorts/\(name)/\(digest).txt" }

    /// The JSON object as the manifest carries it.
    public var jsonValue: JSONValue {
        var o = JSONObject()
        o["name"] = .string(name)
        o["sha256"] = .string(digest)
        o["count"] = .integer(Int64(count))
        return .object(o)
    }
}

/// The cohort file format (docs/formats.md#cohort-files): one device id per line, 32
/// lowercase hex digits and a line feed, in strictly ascending order, at most
/// ``maxIds`` lines; nothing else. Every line is ``recordBytes`` long, so a file's size
/// says its count and a device answers "is this id listed" by binary search without
/// parsing the whole.
public enum CohortFile {
    /// Most ids a cohort lists.
    public static let maxIds = 100_000
    /// Bytes of one line: 32 hex digits and `\n`.
    public static let recordBytes = 33

    /// The canonical file listing `ids` (each once, sorted). The ids are lines of text, `#`
    /// comments and blank lines allowed, surrounding spaces ignored.
    /// - Throws: ``SignedManifestError`` `.invalidArgument` naming the first line that is not a
    ///   device id (32 lowercase hex digits), or a list longer than ``maxIds``.
    public static func canonical(text: String, source: String) throws -> [UInt8] {
        var ids = Set<String>()
        for (number, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard isDeviceId(Array(line.utf8)[...]) else {
                // The line is the file's: escaped (ESC, BEL and the like never reach a terminal), cut.
                throw SignedManifestError(
                    .invalidArgument,
                    "\(source) line \(number + 1): '\(Quoting.escaped(line, limit: 40))' is not a device id (32 lowercase hex digits)")
            }
            ids.insert(line)
            guard ids.count <= maxIds else {
                throw SignedManifestError(.invalidArgument, "\(source) lists more than \(maxIds) device ids")
            }
        }
        return Array(ids.sorted().map { $0 + "\n" }.joined().utf8)
    }

    /// Why `bytes` is not exactly the file `reference` names, or nil when it is: the size,
    /// the SHA-256, then the format (a file the release side did not write canonically).
    public static func problem(_ bytes: [UInt8], reference: CohortReference) -> String? {
        guard bytes.count == reference.count * recordBytes else {
            return "has \(bytes.count) bytes, not the \(reference.count * recordBytes) of the \(reference.count) ids the manifest names"
        }
        guard Digest.hex(.sha256, of: bytes) == reference.digest else {
            return "does not match the SHA-256 the manifest names (another version of the cohort, or altered)"
        }
        var previous: ArraySlice<UInt8>?
        for start in stride(from: 0, to: bytes.count, by: recordBytes) {
            let id = bytes[start..<start + 32]
            guard isDeviceId(id), bytes[start + 32] == 0x0A else { return "line \(start / recordBytes + 1) is not a device id" }
            if let previous, !previous.lexicographicallyPrecedes(id) {
                return "line \(start / recordBytes + 1) is not above the line before it (ids must be sorted, each once)"
            }
            previous = id
        }
        return nil
    }

    /// Whether the checked file `bytes` lists `id` (binary search over its lines).
    public static func contains(_ bytes: [UInt8], id: String) -> Bool {
        let wanted = Array(id.utf8)
        guard wanted.count == 32 else { return false }
        var low = 0
        var high = bytes.count / recordBytes
        while low < high {
            let mid = (low + high) / 2
            let line = bytes[mid * recordBytes..<mid * recordBytes + 32]
            if line.elementsEqual(wanted) { return true }
            if line.lexicographicallyPrecedes(wanted) { low = mid + 1 } else { high = mid }
        }
        return false
    }

    static func isDeviceId(_ bytes: ArraySlice<UInt8>) -> Bool {
        DeviceID.isValid(bytes)
    }
}

extension Manifest {
    /// The cohort of `cohorts` called `name`, or nil.
    public func cohort(named name: String) -> CohortReference? {
        cohorts.first { $0.name == name }
    }
}

extension ManifestFieldReader {
    /// `cohorts`: at most ``CohortReference/maxCount`` `{"name", "sha256", "count"}`, names
    /// distinct and under the label key grammar, counts 0 to ``CohortFile/maxIds``.
    func cohorts(_ name: String) throws -> [CohortReference] {
        guard case .array(let entries) = try value(name) else {
            throw ManifestRejection(.wrongType, field: name, "field '\(name)' must be an array of {\"name\", \"sha256\", \"count\"} objects")
        }
        guard entries.count <= CohortReference.maxCount else {
            throw invalid(name, "names \(entries.count) cohorts, at most \(CohortReference.maxCount)")
        }
        var out: [CohortReference] = []
        for entry in entries {
            guard case .object(let o) = entry, o.count == 3 else {
                throw invalid(name, "entries must be objects with exactly 'name', 'sha256' and 'count'")
            }
            let fields = ManifestFieldReader(object: o)
            let cohort = try fields.string("name")
            if let problem = TargetExpression.cohortNameProblem(cohort) {
                throw invalid(name, "names the cohort \(Quoting.quoted(cohort)): \(problem)")
            }
            guard case .integer(let n) = try fields.value("count"), n >= 0, n <= Int64(CohortFile.maxIds) else {
                throw invalid(name, "gives cohort \(Quoting.quoted(cohort)) a count that is not a whole number from 0 to \(CohortFile.maxIds)")
            }
            guard !out.contains(where: { $0.name == cohort }) else { throw invalid(name, "names the cohort \(Quoting.quoted(cohort)) twice") }
            out.append(CohortReference(name: cohort, digest: try fields.sha256("sha256"), count: Int(n)))
        }
        return out
    }
}
