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

/// Deterministic pseudo-random bytes of these tests (seed 42 unless given).
func fetchTestBytes(_ count: Int, seed: UInt64 = 42) -> Data { deterministicBytes(count, seed: seed) }

/// Runs `curl` with `args` and returns its exit status and stdout.
func runCurl(_ args: [String]) throws -> (Int32, Data) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    p.arguments = ["-s"] + args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.runUnmasked()
    let data = try out.fileHandleForReading.readAllRetryingInterrupts()
    p.waitUntilExit()
    return (p.terminationStatus, data)
}
