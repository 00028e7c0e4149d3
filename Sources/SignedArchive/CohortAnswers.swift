import ClientFoundation
import ClientUpdater
import DeviceIdentity
import Foundation
import SignedManifest

/// What this device knows of cohort files (docs/targeting.md#cohorts): for each file, by
/// the SHA-256 a signed manifest names it with, whether it lists this device's id. A
/// decision that needs an answer it does not have says so
/// (``ArchiveDecision/Decision/needsCohort(_:)``); the check reads that one file and decides again.
package struct CohortAnswers: Sendable, Equatable {
    /// Whether the file of each digest lists this device.
    package var byDigest: [String: Bool]

    package init(_ byDigest: [String: Bool] = [:]) {
        self.byDigest = byDigest
    }

    /// Evaluates `ask` with this device's answers for the cohorts `manifest` names: a
    /// cohort the manifest does not name is not listed (a restriction's target can only
    /// narrow); the first cohort without an answer is returned as `missing` (its test read
    /// as false meanwhile, and the result is not to be used).
    package func evaluate<T>(for manifest: Manifest, _ ask: ((String) -> Bool) -> T) -> (T, missing: CohortReference?) {
        var missing: CohortReference?
        let result = ask { name in
            guard let cohort = manifest.cohort(named: name) else { return false }
            if let answer = byDigest[cohort.digest] { return answer }
            if missing == nil { missing = cohort }
            return false
        }
        return (result, missing)
    }
}

/// `cohorts/<digest>.json` in the root: the answers of ``CohortAnswers``, each with the
/// device id it is for, so a device reads a cohort file once per version of it, not at
/// every check, and keeps no copy of the list itself (a 100,000-id file is 3.3 MB).
struct CohortAnswerStore {
    let layout: RootLayout

    private var folder: String { layout.store("cohorts") }
    private func path(_ digest: String) -> String { folder + "/" + digest + ".json" }

    private struct Answer: Codable {
        var id: String
        var member: Bool
    }

    /// The kept answer for `digest`, when it is for `deviceId`.
    func read(_ digest: String, deviceId: DeviceID) -> Bool? {
        guard let data = try? BoundedFile.read(path(digest), cap: 4096, code: SignedArchiveError.Code.corruptState),
            let answer = try? JSONDecoder().decode(Answer.self, from: data), answer.id == deviceId.text
        else { return nil }
        return answer.member
    }

    /// Keeps an answer (best effort: without it the next check reads the file again).
    func keep(_ digest: String, deviceId: DeviceID, member: Bool) {
        guard let data = try? JSONEncoder().encode(Answer(id: deviceId.text, member: member)) else { return }
        try? AtomicFile.makeDirectory(folder)
        try? AtomicFile.write(data, to: path(digest))
    }

    /// Removes every answer but those of `digests`.
    func prune(keeping digests: Set<String>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names where !name.hasSuffix(".json") || !digests.contains(String(name.dropLast(5))) {
            unlink(folder + "/" + name)
        }
    }
}

extension ArchiveInstaller {
    /// Whether the cohort file `cohort` (beside `manifestURL`) lists this device: the kept
    /// answer, else the file read (at most its named size), checked against the digest and
    /// count the signed manifest names, and answered by binary search.
    /// - Throws: ``SignedArchiveError`` `.archiveRejected` for a file that is missing, of
    ///   another size, or does not match (a CDN serving another version of it, or an
    ///   altered one): the check installs nothing and the device keeps what it runs.
    func cohortAnswer(_ cohort: CohortReference, manifestURL: URL, deviceId: DeviceID) async throws -> Bool {
        let store = CohortAnswerStore(layout: layout)
        if let kept = store.read(cohort.digest, deviceId: deviceId) { return kept }
        guard let url = URL(string: cohort.path, relativeTo: manifestURL)?.absoluteURL else {
            throw SignedArchiveError(.internalError, "no URL for \(cohort.path) beside \(manifestURL.absoluteString)")
        }
        let size = cohort.count * CohortFile.recordBytes
        var bytes: [UInt8]
        while true {
            do {
                guard case .fetched(let body, _) = try await channel.downloader.fetchSmall(url, cap: max(size, 1)) else {
                    throw SignedArchiveError(.internalError, "GET \(url.absoluteString): not modified without a condition")
                }
                bytes = [UInt8](body)
            } catch let error as UpdaterError where error.httpStatus == 404 || error.httpStatus == 410 {
                throw SignedArchiveError(
                    .archiveRejected, "cohort file \(url.absoluteString) is missing (\(error.httpStatus ?? 404)): keeping what this device runs")
            }
            guard let problem = CohortFile.problem(bytes, reference: cohort) else { break }
            // A site mirror's copy that does not match: asked again from the next source.
            if let mirrors = channel.downloader.transport as? MirrorTransport, mirrors.distrust(url) { continue }
            throw SignedArchiveError(.archiveRejected, "cohort file \(url.absoluteString) \(problem): keeping what this device runs")
        }
        let member = CohortFile.contains(bytes, id: deviceId.text)
        store.keep(cohort.digest, deviceId: deviceId, member: member)
        return member
    }
}
