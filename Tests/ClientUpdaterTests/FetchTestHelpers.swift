import ClientUpdater
import Foundation
import TestSupport

/// A temporary folder removed when the value is dropped (fetch tests).
final class FetchScratch {
    let path: String
    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("fetch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `data` to `name` under the folder and returns its full path.
    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        let full = path + "/" + name
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
        return full
    }
}

/// Deterministic pseudo-random bytes (so failures reproduce).
func fetchTestBytes(_ count: Int, seed: UInt64 = 42) -> Data {
    var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    var out = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        out[i] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return Data(out)
}

/// Collects a transport body in memory (tests only).
final class BodyCollector: @unchecked Sendable {
    // @unchecked Sendable: `data` is only touched under `lock`.
    private let lock = NSLock()
    private var storage = Data()
    var data: Data { lock.withLock { storage } }
    func append(_ chunk: UnsafeRawBufferPointer) { lock.withLock { storage.append(contentsOf: chunk) } }
}

extension Transport {
    /// GET into memory (tests only).
    func fetchAll(_ url: URL, headers: [String: String] = [:], idleTimeout: Double = 5) async throws -> (TransportResponse, Data) {
        let body = BodyCollector()
        let response = try await get(TransportRequest(url: url, headers: headers, idleTimeout: idleTimeout)) { body.append($0) }
        return (response, body.data)
    }
}

/// Runs `curl` with `args` and returns its exit status and stdout.
func runCurl(_ args: [String]) throws -> (Int32, Data) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    p.arguments = ["-s"] + args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = try out.fileHandleForReading.readAllRetryingInterrupts()
    p.waitUntilExit()
    return (p.terminationStatus, data)
}
