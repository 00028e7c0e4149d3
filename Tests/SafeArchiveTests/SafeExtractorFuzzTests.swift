import ClientUpdater
import Foundation
import SafeArchive
import SignedArchive
import SignedManifest
import TestSupport
import Testing

/// Deterministic mutations of valid archives: every outcome is a report or a
/// `SafeArchiveError` (never a crash), and a refusal leaves no staging folder and
/// nothing written elsewhere.
@Suite struct SafeExtractorFuzzTests {
    static let tarEntries: [HostileArchive.TarEntry] = [
        .directory("assets/"), .file("index.html", "<html>ok</html>"), .file("assets/app.js", String(repeating: "js;", count: 300)),
        HostileArchive.TarEntry(
            name: Array("long/".utf8) + Array(repeating: 0x61, count: 150), type: UInt8(ascii: "0"),
            data: Array("x".utf8), nameStyle: .pax(fieldName: Array("long".utf8))),
    ]

    func run(_ seedArchive: [UInt8], mutate: (inout [UInt8], inout UInt64) -> Void, wrap: ([UInt8]) -> [UInt8]) throws {
        let sandbox = try ExtractionSandbox()
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var outcomes = (accepted: 0, refused: 0)
        for _ in 0..<150 {
            var bytes = seedArchive
            mutate(&bytes, &state)
            try Data(wrap(bytes)).write(to: URL(fileURLWithPath: sandbox.archive))
            let before = sandbox.snapshot()
            do {
                _ = try sandbox.extractFile(sandbox.archive)
                outcomes.accepted += 1
                try FileManager.default.removeItem(atPath: sandbox.staging)
            } catch let error as SafeArchiveError {
                outcomes.refused += 1
                #expect(error.kind == .dataError, "\(error.message)")
                #expect(!FileManager.default.fileExists(atPath: sandbox.staging))
            }
            #expect(sandbox.snapshot() == before)
        }
        #expect(outcomes.refused > 0)
    }

    static func next(_ state: inout UInt64) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(Int.max))
    }

    static func flipBytes(_ bytes: inout [UInt8], _ state: inout UInt64) {
        for _ in 0..<(1 + next(&state) % 4) {
            bytes[next(&state) % bytes.count] = UInt8(truncatingIfNeeded: next(&state))
        }
    }

    @Test func mutatedTarInsideGzip() throws {
        try run(HostileArchive.tar(Self.tarEntries), mutate: Self.flipBytes, wrap: { HostileArchive.gzip($0) })
    }

    @Test func mutatedGzip() throws {
        try run(HostileArchive.gzip(HostileArchive.tar(Self.tarEntries)), mutate: Self.flipBytes, wrap: { $0 })
    }

    @Test func mutatedZip() throws {
        let zip = HostileArchive.zip([.directory("assets/"), .file("index.html", "<html>ok</html>"), .file("assets/app.js", "js")])
        try run(zip, mutate: Self.flipBytes, wrap: { $0 })
    }

    @Test func truncatedAnywhere() throws {
        let gz = HostileArchive.gzip(HostileArchive.tar(Self.tarEntries))
        try run(gz, mutate: { bytes, state in bytes = Array(bytes.prefix(Self.next(&state) % bytes.count)) }, wrap: { $0 })
    }
}
