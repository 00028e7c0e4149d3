import FleetReports
import Foundation
import StrictJSON
import Testing

/// How a collector reads the members of a batch and of each report: in any order, each
/// once, every refusal naming the field by its path, unknown fields refused.
@Suite struct ReportFieldsTests {
    let head = "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"reports\":["
    let good = "{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}"

    /// A batch whose third report is `report`.
    func batch(third report: String) -> [UInt8] {
        Array((head + good + "," + good.replacingOccurrences(of: "\"seq\":1", with: "\"seq\":2") + "," + report + "]}").utf8)
    }

    func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try ReportBatch.decode(bytes)
            return nil
        } catch {
            return (error as? FleetReportsError)?.message ?? "\(error)"
        }
    }

    /// Members are found wherever they stand in the object, escaped names too.
    @Test func membersAreReadInAnyOrder() throws {
        let inOrder =
            "{\"seq\":3,\"time\":7,\"type\":\"check-refused\",\"running\":\"1.0.0\",\"shell\":\"2.0.0\",\"version\":\"1.1.0\","
            + "\"from\":\"0.9.0\",\"reason\":\"rollout\",\"detail\":\"place 61\",\"via\":\"patch\",\"bytes\":9,\"ms\":4,\"count\":2,"
            + "\"rollout\":{\"percent\":25,\"paused\":true}}"
        let reversed =
            "{\"rollout\":{\"paused\":true,\"percent\":25},\"count\":2,\"ms\":4,\"bytes\":9,\"via\":\"patch\",\"detail\":\"place 61\","
            + "\"reason\":\"rollout\",\"from\":\"0.9.0\",\"version\":\"1.1.0\",\"shell\":\"2.0.0\",\"running\":\"1.0.0\","
            + "\"type\":\"check-refused\",\"time\":7,\"\\u0073eq\":3}"
        let a = try ReportBatch.decode(batch(third: inOrder))
        let b = try ReportBatch.decode(batch(third: reversed))
        #expect(a == b)
        let r = a.reports[2]
        #expect(r.seq == 3 && r.type == .checkRefused && r.shell == "2.0.0" && r.from == "0.9.0" && r.reason == .rollout)
        #expect(r.detail == "place 61" && r.via == .patch && r.bytes == 9 && r.ms == 4 && r.count == 2)
        #expect(r.rollout == RolloutSeen(percent: 25, paused: true))
        #expect(r.time == Date(timeIntervalSince1970: 0.007))
        // The batch's own members too, and null optional members read as absent.
        let shuffled =
            "{\"reports\":[" + good.replacingOccurrences(of: "}", with: ",\"shell\":null,\"ms\":null}")
            + "],\"channel\":\"c\",\"app\":\"a\",\"device\":\"0123456789abcdef0123456789abcdef\",\"schema\":1}"
        let c = try ReportBatch.decode(Array(shuffled.utf8))
        #expect(c.reports.count == 1 && c.reports[0].shell == nil && c.reports[0].ms == nil && c.app == "a" && c.channel == "c")
    }

    /// Every refusal of a report's field names the report by its place and the field.
    @Test(arguments: [
        ("5", "reports[2]: not an object"),
        ("{\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}", "reports[2].seq: missing"),
        ("{\"seq\":null,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}", "reports[2].seq: missing"),
        ("{\"seq\":0,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}", "reports[2].seq: 0 is outside 1…9007199254740991"),
        ("{\"seq\":1.5,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}", "reports[2].seq: not an integer"),
        ("{\"seq\":1,\"time\":-1,\"type\":\"start\",\"running\":\"1.0.0\"}", "reports[2].time: -1 is outside 0…35184372088832"),
        ("{\"seq\":1,\"time\":5,\"type\":\"Start\",\"running\":\"1.0.0\"}", "reports[2].type: not a lowercase word"),
        ("{\"seq\":1,\"time\":5,\"type\":\"\",\"running\":\"1.0.0\"}", "reports[2].type: empty"),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\"}", "reports[2].running: missing"),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":1}", "reports[2].running: not a string"),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0 0\"}", "reports[2].running: not a version"),
        (
            "{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"version\":\"\(String(repeating: "1", count: 65))\"}",
            "reports[2].version: 65 bytes, more than 64"
        ),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"reason\":\"bored\"}", "reports[2].reason: unknown reason \"bored\""),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"via\":\"pigeon\"}", "reports[2].via: unknown transfer \"pigeon\""),
        (
            "{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"detail\":\"a\\u202eb\"}",
            "reports[2].detail: has control characters (C0, C1 or bidi)"
        ),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"count\":0}", "reports[2].count: 0 is outside 1…9007199254740991"),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"rollout\":[]}", "reports[2].rollout: not an object"),
        (
            "{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"rollout\":{\"percent\":101,\"paused\":true}}",
            "reports[2].rollout.percent: 101 is outside 0…100"
        ),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"rollout\":{\"percent\":1}}", "reports[2].rollout.paused: missing"),
        (
            "{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"rollout\":{\"percent\":1,\"paused\":0}}",
            "reports[2].rollout.paused: not true or false"
        ),
        (
            "{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"rollout\":{\"percent\":1,\"paused\":true,\"step\":1}}",
            "reports[2].rollout.step: unknown field"
        ),
        // Of several unknown fields, the first in string order is named; a name that cannot be
        // shown is named as such.
        ("{\"seq\":1,\"zeta\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"alpha\":2}", "reports[2].alpha: unknown field"),
        ("{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"\\n\":2}", "reports[2].(a field name): unknown field"),
    ])
    func aBadFieldIsNamedByItsPath(report: String, message: String) {
        #expect(refusal(batch(third: report)) == message)
    }

    /// The batch's own fields are named without a prefix.
    @Test(arguments: [
        ("\"app\":\"a\"", "\"app\":\"\"", "app: empty"),
        ("\"app\":\"a\"", "\"app\":\"a b\"", "app: not an identifier (letters, digits, . _ -)"),
        ("\"channel\":\"c\"", "\"channel\":\"\(String(repeating: "c", count: 65))\"", "channel: 65 bytes, more than 64"),
        ("\"device\":\"0123456789abcdef0123456789abcdef\"", "\"device\":\"0123\"", "device: not 32 lowercase hex digits"),
        ("\"device\":\"0123456789abcdef0123456789abcdef\"", "\"device\":null", "device: missing"),
        ("\"reports\":[", "\"reports\":5,\"x\":[", "reports: not an array"),
        ("\"app\":\"a\"", "\"app\":\"a\",\"b\":1,\"a\":1", "a: unknown field"),
    ])
    func aBadBatchFieldIsNamed(field: String, replacement: String, message: String) {
        let text = String(decoding: batch(third: good.replacingOccurrences(of: "\"seq\":1", with: "\"seq\":3")), as: UTF8.self)
        #expect(refusal(Array(text.replacingOccurrences(of: field, with: replacement).utf8)) == message)
    }

    /// A schema-2 batch's stream is 16 lowercase hex digits.
    @Test func aStreamIsSixteenHexDigits() {
        let key = String(repeating: "ab", count: 32)
        let text =
            "{\"schema\":2,\"device\":\"0123456789abcdef0123456789abcdef\",\"key\":\"\(key)\",\"stream\":\"00000000000000FF\","
            + "\"app\":\"a\",\"channel\":\"c\",\"reports\":[\(good)]}"
        #expect(refusal(Array(text.utf8)) == "stream: not 16 lowercase hex digits")
        #expect(refusal(Array(text.replacingOccurrences(of: "FF", with: "ff").utf8)) == nil)
    }

    /// An object with more members than a report has (past 64) is read all the same: a bad
    /// known field among them is named first, then the first unknown one.
    @Test func aReportWithManyMembersIsReadWhole() {
        let extra = (0..<70).map { String(format: "\"x%02d\":%d", $0, $0) }.joined(separator: ",")
        let badSeq = "{" + extra + ",\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"seq\":\"1\"}"
        #expect(refusal(batch(third: badSeq)) == "reports[2].seq: not an integer")
        let unknown = "{" + extra + ",\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\",\"seq\":1}"
        #expect(refusal(batch(third: unknown)) == "reports[2].x00: unknown field")
        let lateUnknown = "{\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"," + extra + ",\"seq\":1,\"a\":0}"
        #expect(refusal(batch(third: lateUnknown)) == "reports[2].a: unknown field")
    }

    /// A report read alone (a journal line) is named as its reader says.
    @Test func aReportReadAloneIsNamedByItsReader() throws {
        let line = try StrictJSON.parse(Array("{\"seq\":1,\"time\":5,\"type\":\"start\"}".utf8))
        let byDefault = #expect(throws: FleetReportsError.self) { try ReportBatch.decodeReport(line) }
        #expect(byDefault?.message == "report.running: missing")
        let named = #expect(throws: FleetReportsError.self) { try ReportBatch.decodeReport(line, path: "journal line 4") }
        #expect(named?.message == "journal line 4.running: missing")
        let good = try StrictJSON.parse(Array(self.good.utf8))
        #expect(try ReportBatch.decodeReport(good).running == "1.0.0")
    }
}
