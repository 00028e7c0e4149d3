import ApplyPolicy
import ClientFoundation
import Foundation
import Testing

@Suite("MaintenanceWindow parsing and forms")
struct MaintenanceWindowParsingTests {
    let berlin: TimeZone

    init() throws {
        berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
    }

    @Test(
        "accepted windows",
        arguments: [
            ("02:00-04:00", 120, 240, false), ("22:00-02:00", 1_320, 120, true), ("00:00-24:00", 0, 1_440, false),
            ("23:59-24:00", 1_439, 1_440, false), ("22:00-00:00", 1_320, 0, true), ("00:00-00:01", 0, 1, false),
        ]
    )
    func accepted(text: String, start: Int, end: Int, crosses: Bool) throws {
        let window = try MaintenanceWindow(parsing: text, timeZone: nil, defaultZone: berlin)
        #expect(window.startMinute == start)
        #expect(window.endMinute == end)
        #expect(window.crossesMidnight == crosses)
        #expect(window.timeZoneIdentifier == "Europe/Berlin")
        #expect(window.encoded == "\(text)@Europe/Berlin")
    }

    @Test("the zone comes from the text, else the argument, else the default")
    func zoneSources() throws {
        let fromText = try MaintenanceWindow(parsing: "02:00-04:00@America/New_York", timeZone: nil, defaultZone: berlin)
        #expect(fromText.timeZoneIdentifier == "America/New_York")
        let fromArgument = try MaintenanceWindow(parsing: "02:00-04:00", timeZone: "UTC", defaultZone: berlin)
        #expect(fromArgument.timeZoneIdentifier == "UTC")
        #expect(fromArgument.timeZone.secondsFromGMT(for: try at("2026-06-10T00:00:00Z")) == 0)
        let same = try MaintenanceWindow(parsing: "02:00-04:00@UTC", timeZone: "UTC", defaultZone: berlin)
        #expect(same == fromArgument)
        let fromDefault = try MaintenanceWindow(parsing: "02:00-04:00", timeZone: nil, defaultZone: berlin)
        #expect(fromDefault.timeZoneIdentifier == "Europe/Berlin")
    }

    @Test("description and stored form")
    func forms() throws {
        let window = try MaintenanceWindow(parsing: "02:00-04:00", timeZone: "Europe/Berlin", defaultZone: berlin)
        #expect(window.description == "02:00–04:00 Europe/Berlin")
        #expect(window.encoded == "02:00-04:00@Europe/Berlin")
        #expect(try MaintenanceWindow(encoded: "02:00-04:00@Europe/Berlin") == window)
        #expect(try MaintenanceWindow(startMinute: 120, endMinute: 240, timeZoneIdentifier: "Europe/Berlin") == window)
    }

    @Test("JSON is the stored form as a string")
    func json() throws {
        let windows = [try window("02:00-04:00@Europe/Berlin"), try window("22:00-02:00@UTC")]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(windows)
        #expect(String(decoding: data, as: UTF8.self) == #"["02:00-04:00@Europe/Berlin","22:00-02:00@UTC"]"#)
        #expect(try JSONDecoder().decode([MaintenanceWindow].self, from: data) == windows)
        expectRefusal(.invalidTimeZone, naming: "'02:00-04:00'") {
            _ = try JSONDecoder().decode([MaintenanceWindow].self, from: Data(#"["02:00-04:00"]"#.utf8))
        }
    }

    @Test(
        "malformed windows are refused and named",
        arguments: [
            ("2-4", "is not HH:MM-HH:MM"), ("02:00", "is not HH:MM-HH:MM"), ("02:60-03:00", "has minute 60"), ("02:00-03:75", "has minute 75"),
            ("25:00-26:00", "has hour 25"), ("03:00-03:00", "start equals end"), ("24:00-01:00", "starts at 24:00"), ("", "is empty"),
            ("23:00-24:30", "goes past 24:00"), ("2:00-4:00", "is not HH:MM-HH:MM"), ("02:00 - 04:00", "is not HH:MM-HH:MM"),
            ("02.00-04.00", "is not HH:MM-HH:MM"), ("02:00-04:00x", "is not HH:MM-HH:MM"), ("aa:bb-cc:dd", "is not HH:MM-HH:MM"),
            ("00:00-00:00", "start equals end"), ("24:00-24:00", "starts at 24:00"),
        ]
    )
    func refused(text: String, reason: String) {
        let error = expectRefusal(.invalidWindow, naming: "apply window '\(text)'") {
            _ = try MaintenanceWindow(parsing: text, timeZone: nil, defaultZone: berlin)
        }
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("e.g.") == true)
    }

    @Test("exact message for a malformed window")
    func exactMessage() {
        let error = expectRefusal(.invalidWindow, naming: "'2-4'") { _ = try MaintenanceWindow(parsing: "2-4", timeZone: nil, defaultZone: berlin) }
        #expect(error?.message == "apply window '2-4' is not HH:MM-HH:MM (00:00–24:00, e.g. 02:00-04:00)")
    }

    @Test(
        "refused time zones",
        arguments: [
            ("Mars/Olympus", "not a known IANA"), ("CET", "abbreviation"), ("EST5EDT", "abbreviation"), ("GMT+1", "abbreviation"),
            ("europe/berlin", "not a known"), ("", "is empty"), ("Europe/Berlin ", "not a known"),
        ]
    )
    func refusedZones(zone: String, reason: String) {
        let error = expectRefusal(.invalidTimeZone, naming: "time zone \(Quoting.quoted(zone))") {
            _ = try MaintenanceWindow(parsing: "02:00-04:00", timeZone: zone, defaultZone: berlin)
        }
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("Europe/Berlin, or UTC") == true)
    }

    @Test("an unknown zone in the text is refused too")
    func unknownZoneInText() {
        let error = expectRefusal(.invalidTimeZone, naming: "'Mars/Olympus'") {
            _ = try MaintenanceWindow(parsing: "02:00-04:00@Mars/Olympus", timeZone: nil, defaultZone: berlin)
        }
        #expect(
            error?.message == "apply window time zone 'Mars/Olympus' is not a known IANA time zone identifier"
                + " (use an IANA Area/City identifier, e.g. Europe/Berlin, or UTC)"
        )
    }

    @Test("an unacceptable default zone is refused when it is needed")
    func badDefaultZone() throws {
        let cet = try #require(TimeZone(identifier: "CET"))
        expectRefusal(.invalidTimeZone, naming: "'CET'") { _ = try MaintenanceWindow(parsing: "02:00-04:00", timeZone: nil, defaultZone: cet) }
        #expect(try MaintenanceWindow(parsing: "02:00-04:00", timeZone: "UTC", defaultZone: cet).timeZoneIdentifier == "UTC")
    }

    @Test("two different zones are refused")
    func conflictingZones() {
        expectRefusal(.invalidTimeZone, naming: "'02:00-04:00@Europe/Berlin'") {
            _ = try MaintenanceWindow(parsing: "02:00-04:00@Europe/Berlin", timeZone: "UTC", defaultZone: berlin)
        }
    }

    @Test("minute values are checked by the minutes initializer", arguments: [(-1, 60), (1_440, 60), (0, 1_441), (600, 600)])
    func minutesInitializer(start: Int, end: Int) {
        expectRefusal(.invalidWindow, naming: "apply window '") {
            _ = try MaintenanceWindow(startMinute: start, endMinute: end, timeZoneIdentifier: "UTC")
        }
    }
}
