import DeviceIdentity
import FleetReports
import Foundation
import StrictJSON
import Testing

/// The batch a device sends, read back as a collector reads it.
@Suite struct ReportBatchTests {
    let device = "0123456789abcdef0123456789abcdef"
    let key = DevicePublicKey(hex: String(repeating: "ab", count: 32))

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
            device: DeviceID(device) ?? .random(), app: "com.example.notes", channel: "stable",
            reports: [FleetReport(seq: 1, time: Date(timeIntervalSince1970: 1_764_090_000), type: .start, running: "1.0.0"), committed, refused])
    }

    /// A device with a key writes schema 2: its key and stream lead the batch and read back;
    /// a schema-2 batch without them, or with a key that is not 64 hex digits, is refused.
    @Test func aSignedBatchNamesItsKeyAndStream() throws {
        var batch = sample()
        batch.key = key
        batch.stream = "00000000000000ff"
        let text = String(decoding: batch.encoded(), as: UTF8.self)
        #expect(text.hasPrefix("{\"schema\":2,\"device\":\"\(device)\",\"key\":\"\(batch.key?.hex ?? "")\",\"stream\":\"00000000000000ff\""))
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

    /// A device with labels sends them after the channel, keys in byte order; they read
    /// back, and the collector's canonical JSON of them is what the batch carries. A batch
    /// without labels has no `labels` member at all (as before labels), and `{}` reads as none.
    @Test func aBatchCarriesTheDevicesLabels() throws {
        let text =
            "{\"schema\":1,\"device\":\"\(device)\",\"app\":\"a\",\"channel\":\"stable\","
            + "\"labels\":{\"store\":\"12\",\"ring\":\"beta\",\"site\":\"hq/lobby:2+b@x_y.z-1\"},"
            + "\"reports\":[{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}]}"
        let batch = try ReportBatch.decode(Array(text.utf8))
        #expect(batch.labels["store"] == "12" && batch.labels["ring"] == "beta" && batch.labels.count == 3)
        #expect(batch.labels["site"] == "hq/lobby:2+b@x_y.z-1")
        let canonical = "{\"ring\":\"beta\",\"site\":\"hq/lobby:2+b@x_y.z-1\",\"store\":\"12\"}"
        #expect(batch.labelsJSON == canonical)
        let written = String(decoding: batch.encoded(), as: UTF8.self)
        #expect(written.contains("\"channel\":\"stable\",\"labels\":\(canonical),\"reports\":["), "\(written)")
        #expect(try ReportBatch.decode(batch.encoded()) == batch)

        var signed = batch
        signed.key = key
        signed.stream = "00000000000000ff"
        #expect(try ReportBatch.decode(signed.encoded()) == signed)
        #expect(String(decoding: signed.encoded(), as: UTF8.self).hasPrefix("{\"schema\":2,"), "labels keep schema 2")

        let plain = sample()
        #expect(plain.labels.isEmpty && plain.labelsJSON == "")
        #expect(!String(decoding: plain.encoded(), as: UTF8.self).contains("labels"))
        let empty = text.replacingOccurrences(of: "{\"store\":\"12\",\"ring\":\"beta\",\"site\":\"hq/lobby:2+b@x_y.z-1\"}", with: "{}")
        #expect(try ReportBatch.decode(Array(empty.utf8)).labels.isEmpty)
    }

    /// Labels are read strictly: an object of at most 32 members whose keys and values follow
    /// the label grammar, or the batch is refused naming the label and why.
    @Test(arguments: [
        ("[\"store=12\"]", "labels: not an object"),
        ("null", "labels: not an object"),
        ("\"store=12\"", "labels: not an object"),
        ("{\"Store\":\"12\"}", "labels: the key \"Store\" must start with a lowercase letter"),
        ("{\"id\":\"12\"}", "labels: the key \"id\" is reserved by the target language"),
        ("{\"st ore\":\"12\"}", "labels: the key \"st ore\" has the character ' ' (allowed: lowercase letters, digits and . _ -)"),
        ("{\"\":\"12\"}", "labels: the key \"\" is empty"),
        ("{\"store\":12}", "labels.store: not a string"),
        ("{\"store\":{\"n\":\"12\"}}", "labels.store: not a string"),
        ("{\"store\":\"\"}", "labels.store: the value is empty"),
        ("{\"store\":\"1 2\"}", "labels.store: the value has the character ' ' (allowed: letters, digits and . _ - : / + @)"),
        ("{\"store\":\"a\\u0007b\"}", "labels.store: the value has the character '\\u{7}' (allowed: letters, digits and . _ - : / + @)"),
        ("{\"store\":\"\(String(repeating: "x", count: 65))\"}", "labels.store: the value is 65 characters, at most 64"),
        ("{\"store\":\"1\",\"store\":\"2\"}", "uplicate"),
        (
            "{" + (1...33).map { "\"k\($0)\":\"v\"" }.joined(separator: ",") + "}",
            "labels: 33 labels, more than 32"
        ),
    ])
    func badLabelsRefuseTheBatch(labels: String, message: String) {
        let text =
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"labels\":\(labels),"
            + "\"reports\":[{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}]}"
        let error = #expect(throws: FleetReportsError.self) { try ReportBatch.decode(Array(text.utf8)) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "read")")
        #expect(error.map { $0.code == .invalidField || $0.code == .malformed } == true)
    }

    /// 32 labels are read; the 33rd refuses the batch (above).
    @Test func thirtyTwoLabelsAreRead() throws {
        let labels = "{" + (1...32).map { "\"k\($0)\":\"v\($0)\"" }.joined(separator: ",") + "}"
        let text =
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"labels\":\(labels),"
            + "\"reports\":[{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}]}"
        let batch = try ReportBatch.decode(Array(text.utf8))
        #expect(batch.labels.count == 32 && batch.labels["k32"] == "v32")
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
