import ClientFoundation
import ClientUpdater
import Foundation
import SafeArchive
import SignedManifest
import StrictJSON

/// What one `clientctl mirror` run is asked to do: keep a verified copy of the channel
/// whose manifest is at ``manifestURL`` in ``folder``.
package struct MirrorRequest: Sendable {
    /// The origin's URL of the channel's manifest.
    package var manifestURL: URL
    /// The release keys a device of the channel is initialised with (`--trust`), as PEM.
    package var trustedKeys: [String]
    /// The mirror's folder; the origin's paths are kept under it.
    package var folder: String
    /// `http:` to a host other than loopback (a device's `allowInsecureHTTP`).
    package var allowInsecureHTTP = false
    /// The wall time of the run (expiry of roots, manifests and restrictions).
    package var now: Date

    package init(manifestURL: URL, trustedKeys: [String], folder: String, now: Date = Date()) {
        self.manifestURL = manifestURL
        self.trustedKeys = trustedKeys
        self.folder = folder
        self.now = now
    }
}

/// What a run did. Paths are relative to the mirror's folder.
package struct MirrorReport: Sendable, Equatable, Encodable {
    package var app: String
    package var channel: String
    /// The release the mirror's manifest names now.
    package var version: String
    /// Where the manifest is in the folder.
    package var manifest: String
    /// False when the folder already held exactly what the origin serves.
    package var changed: Bool
    /// Files put in place (taken from the origin, or rebuilt).
    package var written: [String] = []
    /// Archives rebuilt from a patch instead of downloaded.
    package var rebuilt: [String] = []
    /// Files of releases no longer named, removed.
    package var pruned: [String] = []
    /// Bytes taken from the origin by this run, and its requests.
    package var originBytes: Int64 = 0
    package var originRequests = 0
    /// What the run chose not to do, and why (a file on another origin, a rebuild refused).
    package var notes: [String] = []
}

/// `clientctl mirror`: a verified copy of one channel in a folder any static server serves
/// (docs/site-mirror.md). Every file is checked the way a device checks it, with the
/// device's own code: the trust roots walked from the `--trust` keys (``RootChain``), the
/// manifest against the newest root (``ManifestVerifier``), never older than the one held
/// (floor and replay), not expired; the restriction (``Restriction/check(_:for:root:now:source:)``),
/// the index's releases, cohort files (``CohortFile/problem(_:reference:)``), archives and
/// patches against their signed size and SHA-256. Only a run that verified everything
/// changes the folder, and then the manifest last.
package struct SiteMirror: Sendable {
    /// The device's download policy (retries, caps, the idle timeout).
    package var downloader: Downloader
    /// The caps of unpacking when an archive is rebuilt.
    package var limits: ExtractionLimits = .default

    package init(downloader: Downloader) {
        self.downloader = downloader
    }

    /// Reads a `--trust` key file (PEM), as `init --trust` reads it.
    /// - Throws: ``SiteMirrorError`` `.notFound` when it cannot be read, `.invalidArgument` when it is no key.
    package static func readKey(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 16 * 1024 else {
            throw SiteMirrorError(.notFound, "--trust \(path): cannot read the file (or it is over 16 KiB)")
        }
        let pem = String(decoding: data, as: UTF8.self)
        do {
            _ = try Ed25519.PublicKey(pem: pem, source: path)
        } catch let error as any ClientctlError {
            throw SiteMirrorError(.invalidArgument, "--trust \(path): \(error.message)")
        }
        return pem
    }

    /// Runs once.
    /// - Throws: ``SiteMirrorError`` (`.refused`, `.stale`, `.replay`, `.invalidArgument`,
    ///   `.locked`, `.io`), ClientUpdater's `UpdaterError` for an origin that does not
    ///   answer as it must. The folder is then as the last good run left it.
    package func run(_ request: MirrorRequest) async throws -> MirrorReport {
        if case .refused(let why) = URLPolicy.check(request.manifestURL, manifestIsFile: false, allowInsecureHTTP: request.allowInsecureHTTP) {
            throw SiteMirrorError(.invalidArgument, "the manifest URL \(why)")
        }
        guard !request.trustedKeys.isEmpty else {
            throw SiteMirrorError(.invalidArgument, "no --trust key: the mirror verifies with the keys devices trust")
        }
        let keys = try request.trustedKeys.enumerated().map { k, pem in
            do {
                return try Ed25519.PublicKey(pem: pem, source: "trusted key #\(k + 1)")
            } catch let error as any ClientctlError {
                throw SiteMirrorError(.invalidArgument, error.message)
            }
        }
        let root = (request.folder as NSString).standardizingPath
        do {
            try AtomicFile.makeDirectory(root)
        } catch let error as any ClientctlError {
            throw SiteMirrorError(.io, error.message)
        }
        let folder = MirrorFolder(root: root, manifestURL: request.manifestURL)
        let lock: Flock
        do {
            guard let taken = try Flock.attempt(root, .folder) else {
                throw SiteMirrorError(.locked, "\(root) is being mirrored into by another clientctl mirror; try again when it is done")
            }
            lock = taken
        } catch let failure as Flock.Failure {
            throw SiteMirrorError(.io, "cannot lock \(root): \(failure)")
        }
        defer { lock.release() }
        folder.removeStaleStaging()
        let staging = try MirrorStaging(in: folder)
        defer { staging.remove() }
        var run = MirrorRun(mirror: self, request: request, folder: folder, staging: staging, keys: keys)
        do {
            return try await run.perform()
        } catch let error as SignedManifestError {
            throw SiteMirrorError(.refused, "\(error.message); the mirror keeps what it holds", underlying: error)
        } catch let error as SafeArchiveError {
            throw SiteMirrorError(.refused, "\(error.message); the mirror keeps what it holds", underlying: error)
        } catch let error as StrictJSONError {
            throw SiteMirrorError(.refused, "\(error.message); the mirror keeps what it holds", underlying: error)
        }
    }
}
