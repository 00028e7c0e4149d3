import ClientFoundation
import DeviceTargeting
import Foundation
import SignedManifest
import StrictJSON

/// The cohort files of a channel folder (docs/targeting.md#cohorts):
/// `cohorts/<name>.txt`, the list the channel's next signing names, and
/// `cohorts/<name>/<sha256>.txt`, the copies devices read, which never change once written.
public enum ChannelCohorts {
    /// What ``set(_:ids:source:releases:channel:)`` did.
    public struct Outcome: Sendable, Equatable {
        /// The cohort as a manifest signed now names it.
        public var cohort: CohortReference
        /// False when the channel's list was this already.
        public var changed: Bool
        /// Whether the channel's current manifest names another version of the cohort:
        /// devices read the new list once a manifest naming it is signed.
        public var currentNamesOther: Bool
    }

    /// Writes the cohort `name` of the channel: the device ids of `text` (one per line,
    /// `#` comments and blank lines allowed), sorted and each once, under the channel's
    /// publishing lock. Manifests signed from now on name this list.
    /// - Throws: ``ArchivePublishingError`` `.invalidArgument` for a bad name or a line that is
    ///   not a device id, more than 100,000 ids (`CohortFile.maxIds`); `.notFound` without the
    ///   release folder; `.busy` while a publish holds the lock; `.io`. Nothing is written then.
    public static func set(_ name: String, ids text: String, source: String, releases: String, channel: String) throws -> Outcome {
        try checkName(name)
        let folder = releases + "/" + channel
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: releases, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ArchivePublishingError(.notFound, "\(releases) is not a release folder")
        }
        if let problem = ReleaseIdentifier.channel.problem(channel) {
            throw ArchivePublishingError(.invalidArgument, "channel '\(channel)': \(problem)")
        }
        let bytes: [UInt8]
        do {
            bytes = try CohortFile.canonical(text: text, source: source)
        } catch let error as SignedManifestError {
            throw ArchivePublishingError(.invalidArgument, error.message)
        }
        do {
            try AtomicFile.makeDirectory(folder)
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
        let lock = try DirectoryLock(folder)
        defer { lock.release() }
        let cohort = CohortReference(name: name, file: bytes)
        let old = try? current(name, folder: folder)
        do {
            try AtomicFile.makeDirectory(folder + "/cohorts/" + name)
            let copy = folder + "/" + cohort.path
            if !FileManager.default.fileExists(atPath: copy) { try AtomicFile.write(Data(bytes), to: copy) }
            try AtomicFile.write(Data(bytes), to: listPath(name, folder: folder))
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
        let named = currentManifest(folder)?.cohort(named: name)
        return Outcome(cohort: cohort, changed: old != cohort, currentNamesOther: named.map { $0 != cohort } ?? false)
    }

    /// The cohorts of the channel folder, by name, as a manifest signed now would name them.
    public static func list(releases: String, channel: String) throws -> [CohortReference] {
        let folder = releases + "/" + channel
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/cohorts")) ?? []
        return try names.filter { $0.hasSuffix(".txt") }.map { String($0.dropLast(4)) }.sorted().map { try current($0, folder: folder) }
    }

    /// The cohorts the targets of the manifest object `o` (its `target`, its `pins`) ask
    /// about, as the channel folder holds them now: what `cohorts` must say when it is signed.
    /// - Throws: ``ArchivePublishingError`` `.notFound` naming a cohort the folder has no list of.
    static func named(by o: JSONObject, folder: String) throws -> [CohortReference] {
        var targets = [o["target"]?.stringValue]
        targets += (o["pins"]?.arrayValue ?? []).map { $0.objectValue?["target"]?.stringValue }
        return try references(for: targets.map { $0.flatMap { try? TargetExpression(parsing: $0) } }, folder: folder)
    }

    /// The cohorts `targets` ask about, as the channel folder holds them now, by name.
    static func references(for targets: [TargetExpression?], folder: String) throws -> [CohortReference] {
        try Set(targets.flatMap { $0?.cohorts ?? [] }).sorted().map { try current($0, folder: folder) }
    }

    /// Sets `cohorts` of the manifest object `o` to what its targets ask about now.
    static func refresh(_ o: inout JSONObject, folder: String) throws {
        let cohorts = try named(by: o, folder: folder)
        if cohorts.isEmpty { o.removeValue(forKey: "cohorts") } else { o["cohorts"] = .array(cohorts.map(\.jsonValue)) }
    }

    /// The cohort `name` as `cohorts/<name>.txt` holds it, its device copy written if missing.
    static func current(_ name: String, folder: String) throws -> CohortReference {
        let path = listPath(name, folder: folder)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ArchivePublishingError(
                .notFound, "the cohort '\(name)' of \(folder) does not exist (no \(path)): 'clientctl cohort set' writes it first")
        }
        let bytes = [UInt8](data)
        let cohort = CohortReference(name: name, file: bytes)
        if let problem = CohortFile.problem(bytes, reference: cohort) {
            throw ArchivePublishingError(.invalidArgument, "\(path) \(problem): write it with 'clientctl cohort set'")
        }
        let copy = folder + "/" + cohort.path
        if !FileManager.default.fileExists(atPath: copy) {
            do {
                try AtomicFile.makeDirectory(folder + "/cohorts/" + name)
                try AtomicFile.write(data, to: copy)
            } catch let error as any ClientctlError {
                throw ArchivePublishingError(.io, error.message)
            }
        }
        return cohort
    }

    static func checkName(_ name: String) throws {
        if let problem = TargetExpression.cohortNameProblem(name) {
            throw ArchivePublishingError(.invalidArgument, "cohort name '\(name)': \(problem)")
        }
    }

    static func listPath(_ name: String, folder: String) -> String { folder + "/cohorts/" + name + ".txt" }

    /// The channel folder's current manifest, when it has a valid one.
    public static func currentManifest(_ folder: String) -> Manifest? {
        guard let data = FileManager.default.contents(atPath: folder + "/manifest.json"),
            let object = try? StrictJSON.parseObject(data, limits: .manifest)
        else { return nil }
        return try? Manifest.validate(object).get()
    }

    /// `cohorts/<name>/<sha256>.txt`: a device copy, which a prune may delete when no kept
    /// manifest names it.
    static func isCopyPath(_ parts: [String]) -> Bool {
        parts.count == 3 && parts[0] == "cohorts" && TargetExpression.cohortNameProblem(parts[1]) == nil
            && ImmutableFiles.isContentName(parts[2], suffix: ".txt")
    }

    /// The device copies the manifest objects name.
    static func copies(namedBy releases: [JSONObject]) -> Set<String> {
        var paths = Set<String>()
        for entry in releases {
            for value in entry["cohorts"]?.arrayValue ?? [] {
                guard let o = value.objectValue, let name = o["name"]?.stringValue, let digest = o["sha256"]?.stringValue else { continue }
                paths.insert("cohorts/\(name)/\(digest).txt")
            }
        }
        return paths
    }

    /// Channel-relative paths of every device copy in `folder`.
    static func existingCopies(in folder: String) -> [String] {
        var paths: [String] = []
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/cohorts")) ?? []).sorted() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/cohorts/" + name, isDirectory: &isDirectory), isDirectory.boolValue else {
                continue
            }
            for file in ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/cohorts/" + name)) ?? []).sorted() {
                let path = "cohorts/\(name)/\(file)"
                if isCopyPath(path.split(separator: "/").map(String.init)) { paths.append(path) }
            }
        }
        return paths
    }
}
