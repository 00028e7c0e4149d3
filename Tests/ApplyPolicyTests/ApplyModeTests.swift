import ApplyPolicy
import ClientFoundation
import Testing

@Suite("ApplyMode")
struct ApplyModeTests {
    @Test(
        "strict parsing of every mode",
        arguments: [
            ("next-start", ApplyMode.nextStart), ("next-navigation", .nextNavigation), ("idle", .idle), ("window", .window), ("now", .now),
        ]
    )
    func parsing(text: String, mode: ApplyMode) throws {
        #expect(try ApplyMode(parsing: text) == mode)
        #expect(mode.description == text)
        let reading = ApplyMode.received(text)
        #expect(reading.mode == mode)
        #expect(reading.known)
        #expect(ApplyMode(received: text) == mode)
    }

    @Test("strict parsing refuses unknown text", arguments: ["soon", "NOW", "next_start", "nextStart", " now", "now\n"])
    func refused(text: String) {
        let error = expectRefusal(.invalidMode, naming: "apply mode \(Quoting.quoted(text))") { _ = try ApplyMode(parsing: text) }
        #expect(error?.message.contains("next-start, next-navigation, idle, window, now") == true)
    }

    @Test("exact message for an unknown and an empty mode")
    func messages() {
        let unknown = expectRefusal(.invalidMode, naming: "'soon'") { _ = try ApplyMode(parsing: "soon") }
        #expect(unknown?.message == "apply mode 'soon' is not a known apply mode (use one of next-start, next-navigation, idle, window, now)")
        let empty = expectRefusal(.invalidMode, naming: "''") { _ = try ApplyMode(parsing: "") }
        #expect(empty?.message == "apply mode '' is empty (use one of next-start, next-navigation, idle, window, now)")
    }

    @Test("a newline in the value is escaped so the message stays one line")
    func oneLine() {
        let error = expectRefusal(.invalidMode, naming: "'now\\u{a}later'") { _ = try ApplyMode(parsing: "now\nlater") }
        #expect(error?.message.contains("\n") == false)
    }

    @Test("received unknown modes read as next-start and say so", arguments: ["on-reboot", "", "NOW", "next-navigation-v2"])
    func receivedUnknown(text: String) {
        let reading = ApplyMode.received(text)
        #expect(reading.mode == .nextStart)
        #expect(!reading.known)
        #expect(ApplyMode(received: text) == .nextStart)
    }
}
