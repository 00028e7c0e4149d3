import ClientFoundation
import ClientUpdater
import Foundation
import NIOCore
import Synchronization

/// One file the server can answer with: its headers are computed once, its bytes are
/// kept in memory after the first read when small (served versions never change).
final class ServedFile: Sendable {
    /// Absolute path of the bytes.
    let path: String
    /// The URL path the file answers, compared byte for byte (Swift `String` equality would
    /// also match a canonically equivalent spelling, e.g. a decomposed `é`).
    let servedPath: String
    let size: Int64
    let contentType: String
    /// The asset may be cached forever when requested with its hash.
    let cacheable: Bool
    /// The URL path itself carries a hash (40 hex digits or a hashed file name).
    let hashedPath: Bool
    /// `X-SourceMap` value.
    let sourceMap: String?
    /// Quoted entity tag when known up front (the channel's or the organizer's hash).
    private let knownETag: String?
    private let lazy = Mutex(Loaded())

    /// - Parameters:
    ///   - urlPath: the file's name, for its content type and hashed-name check.
    ///   - served: the URL path it answers.
    init(path: String, size: Int64, urlPath: String, served: String, cacheable: Bool, hash: String?, sourceMap: String?) {
        self.path = path
        self.servedPath = served
        self.size = size
        self.contentType = ContentTypes.forPath(urlPath)
        self.cacheable = cacheable
        self.hashedPath = HashedName.containsSHA1Hex(urlPath) || HashedName.looksHashed(urlPath)
        self.sourceMap = sourceMap
        self.knownETag = hash.map { "\"\($0)\"" }
    }

    /// What was learnt about the file after the first request.
    struct Loaded: Sendable {
        var etag: String?
        var bytes: ByteBuffer?
    }

    /// The entity tag and, for small files, the bytes; read from disk once.
    func load(cache: MemoryBudget) async throws -> Loaded {
        var current = lazy.withLock { $0 }
        if let etag = knownETag ?? current.etag, current.bytes != nil || size > cache.fileLimit {
            current.etag = etag
            return current
        }
        if size <= cache.fileLimit {
            let bytes = try await SafeFileReader.readWhole(path, expectedSize: size)
            let etag = knownETag ?? current.etag ?? Self.etag(of: bytes)
            let loaded = Loaded(etag: etag, bytes: cache.reserve(bytes.readableBytes) ? bytes : nil)
            lazy.withLock { $0 = Loaded(etag: etag, bytes: loaded.bytes) }
            return Loaded(etag: etag, bytes: bytes)
        }
        let etag = try await SafeFileReader.etag(path, expectedSize: size)
        lazy.withLock { $0 = Loaded(etag: etag, bytes: nil) }
        return Loaded(etag: etag, bytes: nil)
    }

    /// Whether this file answers `requestPath` exactly (same bytes).
    func answers(_ requestPath: String) -> Bool {
        servedPath.utf8.elementsEqual(requestPath.utf8)
    }

    private static func etag(of bytes: ByteBuffer) -> String {
        let digest = Digest(.sha256)
        bytes.withUnsafeReadableBytes { digest.update($0) }
        return "\"" + digest.finalizeHex() + "\""
    }
}

/// How many bytes one version may keep in memory.
final class MemoryBudget: Sendable {
    private let used = Mutex(0)
    let fileLimit: Int64
    let totalLimit: Int

    init(fileLimit: Int, totalLimit: Int) {
        self.fileLimit = Int64(fileLimit)
        self.totalLimit = totalLimit
    }

    /// Takes `bytes` from the budget; false when it would go over.
    func reserve(_ bytes: Int) -> Bool {
        used.withLock { used in
            guard used + bytes <= totalLimit else { return false }
            used += bytes
            return true
        }
    }
}
