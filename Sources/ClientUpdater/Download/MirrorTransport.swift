import ClientFoundation
import Foundation
import Synchronization

/// One check's transport through site mirrors (docs/site-mirror.md#devices): each request
/// for a file under the origin's folder is tried at the mirrors, in order, and at the
/// origin, each mirror's address being the origin's path under the mirror's base.
///
/// - Content (archives, patches, cohort files, the index): the mirrors first, the origin
///   last.
/// - Freshness (what ``init(inner:origin:mirrors:idleTimeout:prefersOrigin:note:)``'s
///   `prefersOrigin` names: the manifest, trust roots, the restriction): the origin first;
///   the mirrors only once the origin cannot be reached (a failure below HTTP, a 5xx or a
///   429), and then for the rest of the check. A mirror's 404 for such a file is its answer.
///
/// A mirror that fails (a refused connection, silence for ``idleTimeout``, a body slower than
/// its floor (``minimumRate(for:)``), a 5xx or any status but the ones its request asked for:
/// a `304` to a request without a condition, a `416` or `206` to one without `Range`; bytes
/// that did not verify: ``distrust(_:)``) is skipped for the rest of the check, which is what one
/// instance lives for. A mirror that lacks one file (a 404 or 410 for content: it lags, or
/// does not keep that kind of file) is passed over for that file alone: its other files are
/// still taken from it. Nothing here trusts a mirror: whatever it
/// serves is verified by the caller exactly as if the origin had served it. Requests with
/// a body (reports) go to the inner transport as they are, never to a mirror.
package final class MirrorTransport: HeadFirstTransport {
    /// How long a mirror may stay silent when the settings do not say: on a LAN, an answer
    /// is quick or not coming, and the origin is still there to ask.
    package static let defaultIdleTimeout: Duration = .seconds(10)

    /// The slowest a mirror may deliver a body, on average from its head on once its first
    /// ``idleTimeout`` has passed, when no rate cap is lower: 128 KiB/s, a small fraction of
    /// any LAN, so only a mirror that trickles (one byte every few seconds stays under the
    /// idle timeout) is left, and a file of N bytes can be held by a mirror for at most
    /// ``idleTimeout`` + N / 128 KiB/s + ``idleTimeout`` before the origin is asked for the rest.
    package static let floorRate: Int64 = 128 * 1024

    /// Where a request's bytes came from.
    package enum Source: Sendable, Hashable {
        case origin
        /// The mirror at this index of the list given.
        case mirror(Int)
    }

    /// A mirror's address of the origin's folder: the origin's path components that
    /// precede the common part, and the mirror's.
    private struct Mapping: Sendable {
        let base: URLComponents
        let originPrefix: [Substring]
        let mirrorPrefix: [Substring]
    }

    private struct State {
        var skipped: Set<Int> = []
        var originDown = false
        var mirrorBytes: Int64 = 0
        var lastSource: [URL: Source] = [:]
        /// Bytes each URL took from mirrors, taken back from ``mirrorBytes`` by ``distrust(_:)``.
        var mirrorBytesOf: [URL: Int64] = [:]
        /// The mirrors that served bytes of each URL, skipped by ``discard(_:)``.
        var mirrorsOf: [URL: Set<Int>] = [:]
    }

    /// The transport that moves the bytes.
    package let inner: any Transport
    /// The mirrors' addresses of the manifest, in order.
    package let mirrors: [URL]
    /// A mirror's idle timeout (the request's own, when shorter).
    package let idleTimeout: Duration
    private let origin: URL
    private let mappings: [Mapping?]
    private let prefersOrigin: @Sendable (URL) -> Bool
    private let note: @Sendable (String) -> Void
    private let clock: MonotonicClock
    private let state = Mutex(State())

    /// - Parameters:
    ///   - inner: the transport every request goes through.
    ///   - origin: the origin's URL of the manifest.
    ///   - mirrors: each mirror's URL of the same manifest, in the order to try them.
    ///   - idleTimeout: how long a mirror may stay silent.
    ///   - prefersOrigin: true for a URL whose freshness matters (the origin first).
    ///   - note: told, in one line, why a mirror is skipped or the origin was not reached.
    ///   - clock: the monotonic clock a mirror's body is timed on (``minimumRate(for:)``).
    package init(
        inner: any Transport, origin: URL, mirrors: [URL], idleTimeout: Duration = defaultIdleTimeout,
        prefersOrigin: @escaping @Sendable (URL) -> Bool, note: @escaping @Sendable (String) -> Void = { _ in },
        clock: MonotonicClock = .continuous
    ) {
        self.clock = clock
        self.inner = inner
        self.origin = origin
        self.mirrors = mirrors
        self.idleTimeout = idleTimeout
        self.prefersOrigin = prefersOrigin
        self.note = note
        let originParts = Self.parts(origin)
        mappings = mirrors.map { mirror in
            guard let base = URLComponents(url: mirror, resolvingAgainstBaseURL: true) else { return nil }
            let mirrorParts = Self.parts(mirror)
            var common = 0
            while common < min(originParts.count, mirrorParts.count),
                originParts[originParts.count - 1 - common] == mirrorParts[mirrorParts.count - 1 - common]
            {
                common += 1
            }
            guard common > 0 else { return nil }
            return Mapping(
                base: base, originPrefix: Array(originParts.dropLast(common)), mirrorPrefix: Array(mirrorParts.dropLast(common)))
        }
    }

    /// Body bytes the mirrors delivered so far in this check, less those of files that did
    /// not verify (``distrust(_:)``).
    package var mirrorBytes: Int64 { state.withLock { $0.mirrorBytes } }

    /// The mirrors skipped so far in this check (indexes into ``mirrors``).
    package var skipped: Set<Int> { state.withLock { $0.skipped } }

    /// Whether the origin failed to answer in this check.
    package var originDown: Bool { state.withLock { $0.originDown } }

    /// The slowest average rate, in bytes per second, a mirror may deliver `request`'s body
    /// at: ``floorRate``, or an eighth of the request's rate cap when that is lower (a capped
    /// download shares its cap with up to four parallel ones; the floor stays well below
    /// each one's share).
    package static func minimumRate(for request: TransportRequest) -> Int64 {
        guard let cap = request.rateLimiter?.rate?.bytesPerSecond else { return floorRate }
        return max(1, min(floorRate, cap / 8))
    }

    /// The mirror's address of `url`, or nil when `url` is not under the origin's folder.
    package func mirrorURL(of url: URL, mirror index: Int) -> URL? {
        guard mappings.indices.contains(index), let mapping = mappings[index], Self.sameServer(url, origin) else { return nil }
        let parts = Self.parts(url)
        guard parts.count > mapping.originPrefix.count, Array(parts.prefix(mapping.originPrefix.count)) == mapping.originPrefix
        else { return nil }
        var components = mapping.base
        components.percentEncodedPath = "/" + (mapping.mirrorPrefix + parts.dropFirst(mapping.originPrefix.count)).joined(separator: "/")
        components.percentEncodedQuery = nil
        components.fragment = nil
        return components.url
    }

    /// Called when the bytes of `url` did not verify (a digest, a size): the mirror that
    /// served them last is skipped for the rest of the check. Returns true when it was a
    /// mirror (asking again reaches the next source), false when it was the origin.
    package func distrust(_ url: URL) -> Bool {
        let source = state.withLock { state -> Source? in
            guard case .mirror(let index) = state.lastSource[url] else { return nil }
            state.skipped.insert(index)
            state.lastSource[url] = nil
            state.mirrorBytes -= state.mirrorBytesOf.removeValue(forKey: url) ?? 0
            state.mirrorsOf[url] = nil
            return .mirror(index)
        }
        guard case .mirror(let index) = source else { return false }
        note(
            "mirror \(mirrors[index].host ?? "?"): \(url.lastPathComponent) did not verify; "
                + "taken from the next source, mirror skipped for the rest of this check")
        return true
    }

    /// Called when the bytes of `url` on disk did not verify and are dropped whole (a resumed
    /// download whose digest is wrong: some of its bytes came from a source that lied, and
    /// which one cannot be told): the mirror bytes it counted are taken back, and every
    /// mirror that served some of them is skipped for the rest of the check.
    package func discard(_ url: URL) {
        let skippedNow = state.withLock { state -> [Int] in
            state.mirrorBytes -= state.mirrorBytesOf.removeValue(forKey: url) ?? 0
            let served = state.mirrorsOf.removeValue(forKey: url) ?? []
            state.lastSource[url] = nil
            let newly = served.subtracting(state.skipped)
            state.skipped.formUnion(served)
            return newly.sorted()
        }
        for index in skippedNow {
            note(
                "mirror \(mirrors[index].host ?? "?"): \(url.lastPathComponent) did not verify after a resume; "
                    + "taken again from the next source, mirror skipped for the rest of this check")
        }
    }

    package func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        let freshness = prefersOrigin(request.url)
        // A mirror's 404 for the manifest says it does not keep the channel, not that the
        // channel has no release: the next source is asked (for roots and the restriction a
        // 404 is an answer: no newer root, no restriction).
        let manifest = request.url.lastPathComponent == origin.lastPathComponent
        let sources = route(request.url, freshness: freshness)
        // Why the origin did not answer in this request, when it did not: what the caller is
        // told when no mirror stands in, so that its retry asks the origin again.
        var originFailure: (any Error)?
        for (position, (source, url)) in sources.enumerated() {
            let last = position == sources.count - 1
            var attempt = request
            attempt.url = url
            if case .mirror = source { attempt.idleTimeout = min(request.idleTimeout, idleTimeout) }
            let passed = CallerThrew()  // set once the head went to the caller
            let caller = CallerThrew()
            let pace: BodyPace? =
                if case .mirror = source, !last {
                    BodyPace(clock: clock, grace: attempt.idleTimeout, minimumRate: Self.minimumRate(for: request))
                } else { nil }
            do {
                return try await inner.get(
                    attempt,
                    head: { response in
                        if let why = Self.skipReason(
                            response.status, request: request, source: source, freshness: freshness && !manifest)
                        {
                            // The last source's answer goes to the caller as it is, but a
                            // mirror's answer the request did not ask for never does.
                            if !last || source != .origin {
                                throw SkipSource(why: why, lacksFileOnly: Self.lacksFile(response.status, source: source), status: response.status)
                            }
                        }
                        passed.set()
                        pace?.start()
                        self.record(source, for: request.url, bytes: 0)
                        do { try head(response) } catch {
                            caller.set()
                            throw error
                        }
                    },
                    sink: { chunk in
                        if let pace, let slow = pace.add(chunk.count) {
                            throw UpdaterError.network(url, .other(slow))
                        }
                        self.record(source, for: request.url, bytes: chunk.count)
                        do { try sink(chunk) } catch {
                            caller.set()
                            throw error
                        }
                    })
            } catch let skip as SkipSource {
                if skip.lacksFileOnly {
                    note("mirror \(url.host ?? "?"): \(url.lastPathComponent): \(skip.why); taken from the next source")
                } else {
                    failed(source, url: url, why: skip.why)
                }
                if source == .origin { originFailure = UpdaterError.httpStatus(request.url, skip.status) }
                if last {
                    throw originFailure
                        ?? UpdaterError.httpStatus(
                            request.url, skip.status, "from mirror \(url.host ?? "?"): \(skip.why), an answer this request did not ask for")
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if caller.isSet && (error as? any TransportFailing)?.transportFailure == nil { throw error }
                failed(source, url: url, why: "\(error)")
                if source == .origin { originFailure = error }
                // Bytes already went to the caller: the caller's retry resumes from the next source.
                if last || passed.isSet { throw error }
            }
        }
        throw UpdaterError(.internalError, "GET \(request.url.absoluteString): no source to ask")
    }

    package func exchange(_ request: TransportExchange) async throws -> TransportReply {
        try await inner.exchange(request)
    }

    /// The sources to ask for `url`, in order, each with its address.
    private func route(_ url: URL, freshness: Bool) -> [(Source, URL)] {
        let (skipped, originDown) = state.withLock { ($0.skipped, $0.originDown) }
        let mirrored = mirrors.indices.filter { !skipped.contains($0) }.compactMap { index in
            mirrorURL(of: url, mirror: index).map { (Source.mirror(index), $0) }
        }
        let fromOrigin = [(Source.origin, url)]
        return freshness && !originDown ? fromOrigin + mirrored : mirrored + fromOrigin
    }

    /// True when a content answer says only that the mirror does not hold the file.
    private static func lacksFile(_ status: Int, source: Source) -> Bool {
        guard case .mirror = source else { return false }
        return status == 404 || status == 410
    }

    /// Why a source's answer sends the request on to the next source, or nil to take it.
    /// A mirror's answer is taken only when it is one the request asked for: `200`; `206` or
    /// `416` to a request with `Range`; `304` to a conditional one (`If-None-Match`,
    /// `If-Modified-Since`); a 404 or 410 for a file whose freshness matters.
    private static func skipReason(_ status: Int, request: TransportRequest, source: Source, freshness: Bool) -> String? {
        switch source {
        case .origin:
            return status >= 500 || status == 429 ? "HTTP \(status)" : nil
        case .mirror:
            let ranged = has("range", in: request)
            let conditional = has("if-none-match", in: request) || has("if-modified-since", in: request)
            switch status {
            case 200: return nil
            case 206, 416: return ranged ? nil : "HTTP \(status) to a request without Range"
            case 304: return conditional ? nil : "HTTP 304 to a request without a condition"
            case 404 where freshness, 410 where freshness: return nil  // not published there: an answer
            default: return "HTTP \(status)"
            }
        }
    }

    /// True when `request` carries the header `name` (lowercase), whatever its case.
    private static func has(_ name: String, in request: TransportRequest) -> Bool {
        request.headers.keys.contains { $0.lowercased() == name }
    }

    private func failed(_ source: Source, url: URL, why: String) {
        switch source {
        case .origin:
            state.withLock { $0.originDown = true }
            note("origin \(url.host ?? "?") not reached for \(url.lastPathComponent) (\(why)): the mirrors are asked for the rest of this check")
        case .mirror(let index):
            state.withLock { _ = $0.skipped.insert(index) }
            note("mirror \(url.host ?? "?"): \(url.lastPathComponent): \(why); skipped for the rest of this check")
        }
    }

    private func record(_ source: Source, for url: URL, bytes: Int) {
        state.withLock { state in
            state.lastSource[url] = source
            if case .mirror(let index) = source {
                state.mirrorBytes += Int64(bytes)
                state.mirrorBytesOf[url, default: 0] += Int64(bytes)
                state.mirrorsOf[url, default: []].insert(index)
            }
        }
    }

    private static func parts(_ url: URL) -> [Substring] {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        return path.split(separator: "/")
    }

    private static func sameServer(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && effectivePort(a) == effectivePort(b)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}

/// A mirror body's pace: bytes received since its head, against the floor a mirror must
/// keep on average once `grace` has passed (``MirrorTransport/minimumRate(for:)``). The
/// transport calls a sink serially; the lock only makes that visible to the compiler.
private final class BodyPace: Sendable {
    private struct Progress {
        var started: Duration?
        var bytes: Int64 = 0
    }
    private let clock: MonotonicClock
    private let grace: Duration
    private let minimumRate: Int64
    private let progress = Mutex(Progress())

    init(clock: MonotonicClock, grace: Duration, minimumRate: Int64) {
        self.clock = clock
        self.grace = grace
        self.minimumRate = minimumRate
    }

    /// The head arrived: the body's time starts.
    func start() { progress.withLock { $0.started = clock.now } }

    /// Counts `count` bytes; says why the mirror is too slow when it is behind its floor.
    func add(_ count: Int) -> String? {
        let now = clock.now
        return progress.withLock { progress -> String? in
            progress.bytes += Int64(count)
            guard let started = progress.started else { return nil }
            let elapsed = now - started
            guard elapsed > grace else { return nil }
            let owed = Double(minimumRate) * (elapsed - grace).inSeconds
            guard Double(progress.bytes) < owed else { return nil }
            return "the mirror sent \(progress.bytes) bytes in \(TransportFailure.seconds(elapsed)), slower than its floor of "
                + "\(minimumRate) bytes/s"
        }
    }
}

/// Thrown by a response head that sends the request on to the next source.
private struct SkipSource: Error {
    let why: String
    /// The mirror lacks this file only: it is not skipped for the others.
    let lacksFileOnly: Bool
    /// The status that sent it on.
    let status: Int
}
