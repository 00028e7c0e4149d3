import FleetReports
import Foundation
import Testing

/// The cohort filter `fleet status --label` and the collector's `?label=` share: its
/// grammar, its bound, and the text it finds in stored labels.
@Suite struct LabelFilterTests {
    /// Labels as a batch carries them (the collector's canonical JSON is written from these).
    func batch(labels: String) throws -> ReportBatch {
        let text =
            "{\"schema\":1,\"device\":\"0123456789abcdef0123456789abcdef\",\"app\":\"a\",\"channel\":\"c\",\"labels\":\(labels),"
            + "\"reports\":[{\"seq\":1,\"time\":5,\"type\":\"start\",\"running\":\"1.0.0\"}]}"
        return try ReportBatch.decode(Array(text.utf8))
    }

    @Test func aFilterReadsKeyValuePairsInKeyOrder() throws {
        let filter = try LabelFilter(["store=12", "ring=beta", "site=hq/lobby:2"])
        #expect(filter.labels == ["store": "12", "ring": "beta", "site": "hq/lobby:2"])
        #expect(filter.assignments == ["ring=beta", "site=hq/lobby:2", "store=12"])
        #expect(filter.description == "ring=beta,site=hq/lobby:2,store=12")
        #expect(filter.patterns == ["\"ring\":\"beta\"", "\"site\":\"hq/lobby:2\"", "\"store\":\"12\""])
        #expect(try LabelFilter(filter.assignments) == filter)
        #expect(try LabelFilter([]).isEmpty && LabelFilter().description.isEmpty)
        #expect(try LabelFilter((1...8).map { "k\($0)=v" }).labels.count == 8)
    }

    @Test(arguments: [
        (["store"], "label 'store': not KEY=VALUE"),
        (["=12"], "label '=12': the key is empty"),
        (["Store=12"], "label 'Store=12': the key must start with a lowercase letter"),
        (["id=12"], "label 'id=12': the key is reserved by the target language"),
        (["store="], "label 'store=': the value is empty"),
        (["store=1=2"], "label 'store=1=2': the value has the character '=' (allowed: letters, digits and . _ - : / + @)"),
        (["store=1\u{1b}[2J"], "label 'store=1\\u{1b}[2J': the value has the character '\\u{1b}'"),
        (["store=12", "store=13"], "label 'store=13': the key 'store' is given twice (a device has one value per key)"),
        ((1...9).map { "k\($0)=v" }, "label: 9 labels, at most 8"),
    ])
    func aBadFilterIsRefusedNamingWhy(texts: [String], message: String) {
        let error = #expect(throws: FleetReportsError.self) { try LabelFilter(texts) }
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "read")")
        #expect(error.map { !$0.message.contains("\n") } == true)
    }

    /// A filter's text is in the canonical JSON of some labels exactly when they hold all of
    /// it: not a prefix of a value (`store=1` in `store=12`), not a value under another key,
    /// not another case, and `_` is no wildcard.
    @Test func aFilterMatchesExactlyTheLabelsThatHoldIt() throws {
        let labels = try batch(labels: "{\"store\":\"12\",\"ring\":\"beta\",\"site\":\"a_b.c\",\"tag\":\"store\"}")
        let json = labels.labelsJSON
        for (texts, expected) in [
            (["store=12"], true), (["store=12", "ring=beta"], true), (["site=a_b.c"], true), (["tag=store"], true),
            (["store=1"], false), (["store=2"], false), (["store=12", "ring=prod"], false), (["ring=Beta"], false),
            (["site=axb.c"], false), (["site=a_b"], false), (["ring=store"], false), (["tore=12"], false), (["other=12"], false),
        ] {
            let filter = try LabelFilter(texts)
            #expect(filter.matches(labels.labels) == expected, "\(texts)")
            #expect(filter.patterns.allSatisfy { json.contains($0) } == expected, "\(texts) in \(json)")
        }
    }
}
