import FleetReports
import Foundation
import StrictJSON
import Testing

/// The batch a device sends, read back as a collector reads it.
@Suite struct ReportBatchTests {
    let device = "0123456789abcdef0123456789abcdef"

    func sample() -> ReportBatch {
        var committed = FleetReport(seq: 2, time: Date(timeIntervalSince1970: 1_764_090_000.5), type: .committed, running: "1.1.0")
        committed.version = "1.1.0"
        committed.ms = 840
        committed.shell = "2.0.0"
        var refused = FleetReport(seq: 3, time: Date(timeIntervalSince1970: 1_764_090_001), type: .checkRefused, running: "1.1.0")
        refused.version = "1.2.0"
        refused.reason = .rollout
        refused.rollout = RolloutSeen(percent: 25, paused: true)
        refused.detail = "place 61 of 100, step 25 %"
        return ReportBatch(
            device: device, app: "com.example.notes", channel: "stable",
            reports: [FleetReport(seq: 1, time: Date(timeIntervalSince1970: 1_764_090_000), type: .start, running: "1.0.0"), committed, refused])
    }

    /// A device with a key writes schema 2: its key and stream lead the batch and read back;
    /// a schema-2 batch without them, or with a key that is not 64 hex digits, is refused.
    @Test func aSignedBatchNamesItsKeyAndStream() throws {
        var batch = sample()
        batch.key = String(repeating: "ab", count: 32)
        batch.stream = "00000000000000ff"
        let text = String(decoding: batch.encoded(), as: UTF8.self)
        #expect(text.hasPrefix("{\"schema\":2,\"device\":\"\(device)\",\"key\":\"\(batch.key ?? "")\",\"stream\":\"00000000000000ff\""))
        #expect(try ReportBatch.decode(batch.encoded()) == batch)
        for (edit, why) in [
            ((",\"stream\":\"00000000000000ff\""), "stream: missing"),
            (("\"key\":\"" + String(repeating: "ab", count: 32) + "\","), "key: missing"),
        ] {
            let broken = Data(text.replacingOccurrences(of: edit, with: "").utf8)
            #expect(throws: FleetReportsError.self) { try ReportBatch.decode(broken) }
            do { _ = try ReportBatch.decode(broken) } catch let error as FleetReportsError { #expect(error.message == why) }
        }
        let shortKey = Data(text.replacingOccurrences(of: String(repeating: "ab", count: 32), with: "abab").utf8)
        do {
            _ = try ReportBatch.decode(shortKey)
            Issue.record("a 2-byte key was read")
        } catch let error as FleetReportsError {
            #expect(error.message == "key: not 64 lowercase hex digits")
        }
    }

    @Test func aBatchReadsBackAsWritten() throws {
        let batch = sample()
        let read = try ReportBatch.decode(batch.encoded())
        #expect(read == batch)
        #expect(String(decoding: batch.encoded(), as: UTF8.self).hasPrefix("{\"schema\":1,\"device\":\"\(device)\""))
    }

    @Test(arguments: [
        ("{\"schema\":3,\"device\":\"x\"}", "schema: 3 is not a schema this collector knows (1, 2)"),
        ("[]", "batch: not a JSON object"),
        ("{\"schema\":1,\"device\":\"ABC\",\"app\":\"a\",\"channel\":\"c\",\"reports\":[]}", "device: not 32 lowercase hex digits"),
        (
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"reports\":[]}",
            "reports: empty"
        ),
        (
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"reports\":[{\"seq\":1,\"time\":5,\"type\":\"boot\",\"running\":\"1.0.0\"}]}",
            "reports[0].type: unknown report type \"boot\""
        ),
        (
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"reports\":[{\"seq\":\"1\",\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}]}",
            "reports[0].seq: not an integer"
        ),
        (
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"reports\":[{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"host\":\"pc\"}]}",
            "reports[0].host: unknown field"
        ),
        (
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"extra\":1,\"reports\":[{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}]}",
            "extra: unknown field"
        ),
    ])
    func badBatchesAreRefusedNamingTheField(text: String, message: String) {
        let error = #expect(throws: FleetReportsError.self) { try ReportBatch.decode(Array(text.utf8)) }
        #expect(error?.message == message)
    }

    @Test func limitsAreEnforced() {
        var batch = sample()
        let one = batch.reports[0]
        batch.reports = (1...501).map {
            var r = one
            r.seq = Int64($0)
            return r
        }
        let error = #expect(throws: FleetReportsError.self) { try ReportBatch.decode(batch.encoded()) }
        #expect(error?.code == .tooLarge)
        let big = Array(repeating: UInt8(0x20), count: ReportBatch.maxBytes + 1)
        #expect(throws: FleetReportsError.self) { try ReportBatch.decode(big) }
    }

    @Test func detailIsClippedAndControlCharactersGo() {
        let clipped = FleetReport.clip(String(repeating: "é", count: 150) + "\n")
        #expect(clipped.utf8.count <= FleetReport.maxDetailBytes)
        #expect(FleetReport.clip("a\nb") == "a b")
    }

    @Test func theSummaryRoundTrips() throws {
        var summary = FleetSummary(app: "a", channel: "stable", generated: Date(timeIntervalSince1970: 1_764_090_000), windowSeconds: 86_400)
        var v = VersionSummary(version: "1.1.0")
        v.trials = 40
        v.rollbacks = ["timed-out": 12]
        v.failureRate = 0.3
        summary.versions = [v]
        let data = try FleetSummary.encoder().encode(summary)
        #expect(try FleetSummary.decoder().decode(FleetSummary.self, from: data) == summary)
    }
}
