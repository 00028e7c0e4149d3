import ApplyPolicy
import Testing

@Suite("DurationText")
struct DurationTextTests {
    @Test(
        "accepted forms",
        arguments: [
            ("48h", 172_800), ("90m", 5_400), ("2d", 172_800), ("3600s", 3_600), ("1d12h", 129_600), ("3600", 3_600),
            ("0", 0), ("0s", 0), ("2h30m", 9_000), ("1d2h3m4s", 93_784), ("1h3600s", 7_200), ("365d", 31_536_000),
            ("31536000", 31_536_000), ("0001h", 3_600),
        ]
    )
    func accepted(text: String, seconds: Int) throws {
        #expect(try DurationText.seconds(parsing: text, field: "apply grace") == seconds)
    }

    @Test(
        "refusals name the value",
        arguments: [
            ("", "is empty"), ("-5h", "is negative"), ("-0", "is negative"), ("5w", "unknown unit 'w'"), ("48H", "unknown unit 'H'"),
            ("400d", "longer than 365d"), ("365d1s", "longer than 365d"), ("31536001", "longer than 365d"),
            ("99999999999999999999999999", "longer than 365d"), ("99999999999999999999999999s", "longer than 365d"),
            ("8760h1s", "longer than 365d"), ("1h1d", "out of order"), ("1d1d", "out of order"), ("1d12", "without a unit"),
            ("h", "without a number"), ("48 h", "unexpected character ' '"), ("4.5h", "unexpected character '.'"),
            ("+5h", "unexpected character '+'"), ("٣h", "unexpected character '٣'"),
        ]
    )
    func refused(text: String, reason: String) {
        let error = expectRefusal(.invalidDuration, naming: "apply grace '\(text)'") {
            _ = try DurationText.seconds(parsing: text, field: "apply grace")
        }
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test("exact message for an unknown unit")
    func exactMessage() {
        let error = expectRefusal(.invalidDuration, naming: "'5w'") { _ = try DurationText.seconds(parsing: "5w", field: "apply grace") }
        #expect(error?.message == "apply grace '5w' has unknown unit 'w' (units are d, h, m, s; e.g. 48h, 90m, 2d, 1d12h, or plain seconds 3600)")
    }

    @Test(
        "rendering for status lines",
        arguments: [
            (0, "0s"), (45, "45s"), (60, "1m"), (5_400, "1h 30m"), (129_600, "1d 12h"), (86_405, "1d 5s"), (93_784, "1d 2h 3m 4s"),
            (-90, "-1m 30s"), (31_536_000, "365d"),
        ]
    )
    func rendering(seconds: Int, text: String) {
        #expect(DurationText.render(seconds: seconds) == text)
    }

    @Test("render of Int.min does not trap")
    func renderMinimum() {
        #expect(DurationText.render(seconds: Int.min).hasPrefix("-"))
    }
}
