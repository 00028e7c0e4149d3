import ClientUpdater
import Foundation
import Hummingbird

/// One file the server can answer with: its headers are computed once, its bytes are
/// kept in memory after the first read when small (served versions never change).
final class ServedFile: Sendable {
    /// Absolute path of the bytes.
    let path: String
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
    private let lazy = LockedState()

    init(path: String, size: Int64, urlPath: String, cacheable: Bool, hash: String?, sourceMap: String?) {
        self.path = path
        self.size = size
        self.contentType = ContentTypes.forPath(urlPath)
        self.cacheable = cacheable
        self.hashedPath = PathRules.containsSHA1Hex(urlPath) || PathRules.hasHashedName(urlPath)
        self.sourceMap = sourceMap
        self.knownETag = hash.map { "\"\($0)\"" }
    }

    /// What was learnt about the file after the first request.
    struct Loaded: Sendable {
        var etag: String?
        var bytes: ByteBuffer?
    }

    final class LockedState: @unchecked Sendable {
        // Guarded by `lock`; only `Sendable` values go in and out.
        private let lock = NSLock()
        private var value = Loaded()
        func get() -> Loaded { lock.withLock { value } }
        func set(_ new: Loaded) { lock.withLock { value = new } }
    }

    /// The entity tag and, for small files, the bytes; read from disk once.
    func load(cache: MemoryBudget) async throws -> Loaded {
        var current = lazy.get()
        if let etag = knownETag ?? current.etag, current.bytes != nil || size > cache.fileLimit {
            current.etag = etag
            return current
        }
        if size <= cache.fileLimit {
            let bytes = try Self.readWhole(path, expected: size)
            let etag = knownETag ?? current.etag ?? Self.etag(of: bytes)
            let loaded = Loaded(etag: etag, bytes: cache.reserve(bytes.readableBytes) ? bytes : nil)
            lazy.set(Loaded(etag: etag, bytes: loaded.bytes))
            return Loaded(etag: etag, bytes: bytes)
        }
        let etag = try await Self.hashInBackground(path)
        lazy.set(Loaded(etag: etag, bytes: nil))
        return Loaded(etag: etag, bytes: nil)
    }

    private static func etag(of bytes: ByteBuffer) -> String {
        let digest = Digest(.sha256)
        bytes.withUnsafeReadableBytes { digest.update($0) }
        return "\"" + digest.finalizeHex() + "\""
    }

    private static func hashInBackground(_ path: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { "\"" + (try Digest.hex(.sha256, ofFileAt: path)) + "\"" })
            }
        }
    }

    /// Reads a small file into one buffer.
    private static func readWhole(_ path: String, expected: Int64) throws -> ByteBuffer {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UpdaterError.io("cannot open", path: path, errno: errno) }
        defer { close(fd) }
        var buffer = ByteBufferAllocator().buffer(capacity: Int(expected) + 1)
        while true {
            var failure: Int32 = 0
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 4096) { raw -> Int in
                let r = read(fd, raw.baseAddress, raw.count)
                if r < 0 { failure = errno; return 0 }
                return r
            }
            if failure == EINTR { continue }
            if failure != 0 { throw UpdaterError.io("cannot read", path: path, errno: failure) }
            if n == 0 { break }
        }
        return buffer
    }
}

/// How many bytes one version may keep in memory.
final class MemoryBudget: @unchecked Sendable {
    // `used` is guarded by `lock`.
    private let lock = NSLock()
    private var used = 0
    let fileLimit: Int64
    let totalLimit: Int

    init(fileLimit: Int, totalLimit: Int) {
        self.fileLimit = Int64(fileLimit)
        self.totalLimit = totalLimit
    }

    /// Takes `bytes` from the budget; false when it would go over.
    func reserve(_ bytes: Int) -> Bool {
        lock.withLock {
            guard used + bytes <= totalLimit else { return false }
            used += bytes
            return true
        }
    }
}
