// transport-bench: the client side of Scripts/bench/transport.
//
//   transport-bench get URL OUT [CA]                 DefaultTransport, body to OUT
//   transport-bench slow URL OUT MBPS [CA]           same, the sink sleeps to write at most MBPS MB/s
//   transport-bench download URL OUT [CA]            Downloader: O_EXCL file, SHA-256 while writing, fsync
//   transport-bench capped URL OUT RATE|none|unset [CA]
//       Downloader under a rate cap (a ByteRate text, as `downloadRate` takes it), with no
//       limiter (none), or with the limiter of a device whose setting is unset (unset: it
//       follows the setting and never waits); prints {"bytes","seconds","waited"} as JSON, the
//       time from the first request to the verified file (Scripts/bench/download-rate)
//   transport-bench update BASE COUNT reuse|fresh [CA]
//       a Meteor-shaped update: GET BASE/manifest.json, then BASE/a0 … a<COUNT-1>, 6 at a
//       time; `reuse` shares one connection pool, `fresh` opens a new client per request
//
// CA: a PEM file trusted instead of the system store (the bench's own CA for https:).
// Prints the SHA-256 (download mode) on stdout; exits 1 with a message on failure.
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation

let args = CommandLine.arguments
guard args.count >= 4 else {
    FileHandle.standardError.write(Data("usage: transport-bench get|slow|download|update …\n".utf8))
    exit(64)
}

/// Writes chunks to a descriptor (the sink is called serially).
final class FileSink: @unchecked Sendable {
    // @unchecked Sendable: the transport calls the sink serially; `fd` never changes.
    let fd: Int32
    let path: String
    init(_ path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        self.path = path
        guard fd >= 0 else { throw UpdaterError.io("cannot create", path: path, errno: errno) }
    }
    func write(_ chunk: UnsafeRawBufferPointer) throws { try AtomicFile.writeAll(fd: fd, bytes: chunk, path: path) }
    deinit { close(fd) }
}

func settings(ca: String?) -> HTTPTransportSettings {
    var s = HTTPTransportSettings.fromEnvironment()
    s.caFile = ca
    return s
}

func get(_ transport: any Transport, _ url: URL, to out: String, bytesPerSecond: Double?) async throws {
    let sink = try FileSink(out)
    let response = try await transport.get(TransportRequest(url: url)) { chunk in
        try sink.write(chunk)
        if let bytesPerSecond { usleep(UInt32(Double(chunk.count) / bytesPerSecond * 1e6)) }
    }
    guard response.status == 200 else { throw UpdaterError.httpStatus(url, response.status) }
}

func update(base: URL, count: Int, reuse: Bool, ca: String?) async throws {
    func fetch(_ path: String) async throws {
        let registry = reuse ? HTTPClientRegistry.shared : HTTPClientRegistry()
        let transport = HTTPTransport(settings: settings(ca: ca), registry: registry)
        let url = base.appendingPathComponent(path)
        let response = try await transport.get(TransportRequest(url: url)) { _ in }
        if !reuse { try await registry.shutdown() }
        guard response.status == 200 else { throw UpdaterError.httpStatus(url, response.status) }
    }
    try await fetch("manifest.json")
    try await withThrowingTaskGroup(of: Void.self) { group in
        for i in 0..<count {
            if i >= 6 { try await group.next() }
            group.addTask { try await fetch("a\(i)") }
        }
        try await group.waitForAll()
    }
}

do {
    guard let url = URL(string: args[2]) else { throw UpdaterError(.invalidArgument, "bad URL \(args[2])") }
    switch args[1] {
    case "get":
        try await get(DefaultTransport(settings: settings(ca: args.count > 4 ? args[4] : nil)), url, to: args[3], bytesPerSecond: nil)
    case "slow":
        guard args.count >= 5, let mbps = Double(args[4]) else { throw UpdaterError(.invalidArgument, "slow needs MBPS") }
        try await get(
            DefaultTransport(settings: settings(ca: args.count > 5 ? args[5] : nil)), url, to: args[3],
            bytesPerSecond: mbps * 1e6)
    case "download":
        unlink(args[3])
        let downloader = Downloader(transport: DefaultTransport(settings: settings(ca: args.count > 4 ? args[4] : nil)), retry: .never)
        print(try await downloader.download(url, to: args[3]).digest)
    case "capped":
        guard args.count >= 5 else { throw UpdaterError(.invalidArgument, "capped needs RATE or none") }
        let limiter =
            switch args[4] {
            case "none": nil as RateLimiter?
            case "unset": RateLimiter(following: { nil })
            default: RateLimiter(setting: args[4])
            }
        guard args[4] == "none" || limiter != nil else {
            throw UpdaterError(.invalidArgument, "RATE \(ByteRate.problem(args[4]) ?? args[4])")
        }
        unlink(args[3])
        var downloader = Downloader(transport: DefaultTransport(settings: settings(ca: args.count > 5 ? args[5] : nil)), retry: .never)
        downloader.rateLimiter = limiter
        let started = ContinuousClock.now
        let result = try await downloader.download(url, to: args[3])
        let took = ContinuousClock.now - started
        let waited = limiter?.accounting.waited ?? .zero
        print("{\"bytes\": \(result.size), \"seconds\": \(took.inSeconds), \"waited\": \(waited.inSeconds)}")
    case "update":
        guard args.count >= 5, let count = Int(args[3]) else { throw UpdaterError(.invalidArgument, "update needs COUNT") }
        try await update(base: url, count: count, reuse: args[4] == "reuse", ca: args.count > 5 ? args[5] : nil)
    default:
        throw UpdaterError(.invalidArgument, "unknown mode \(args[1])")
    }
} catch let error as any ClientctlError {
    FileHandle.standardError.write(Data("transport-bench: \(error.message)\n".utf8))
    exit(1)
}
