import ClientFoundation
import Foundation
import Testing

/// The embedded seed is a case in Swift and the string `"embedded"` in JSON, as every
/// report and event has always written it (docs/device-layout.md, `status --json`).
@Suite struct RunningVersionTests {
    struct Report: Codable, Equatable {
        var current: RunningVersion
        var selected: RunningVersion
    }

    @Test func jsonIsTheStringItAlwaysWas() throws {
        let report = Report(current: .embedded, selected: .installed("1.2.0"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(report), as: UTF8.self)
        #expect(json == #"{"current":"embedded","selected":"1.2.0"}"#)
        #expect(try JSONDecoder().decode(Report.self, from: Data(json.utf8)) == report)
    }

    @Test func stateJSONsNilIsTheSeed() {
        #expect(RunningVersion(nil) == .embedded)
        #expect(RunningVersion("1.0.0") == .installed("1.0.0"))
        #expect(RunningVersion.embedded.installedID == nil)
        #expect(RunningVersion.installed("1.0.0").installedID == "1.0.0")
        #expect("\(RunningVersion.embedded)" == "embedded" && RunningVersion.embedded.spoken == "the embedded seed")
    }

    @Test func aNonStringIsRefused() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Report.self, from: Data(#"{"current":null,"selected":"1.0.0"}"#.utf8)) }
    }
}
