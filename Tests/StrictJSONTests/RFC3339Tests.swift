import Foundation
import StrictJSON
import Testing

/// The one grammar of signed times (docs/formats.md#times), read by `RFC3339.read` for every
/// signed document, checked against `date -u -d` (GNU coreutils), an implementation that
/// shares nothing with ours, for the instants it names.
@Suite struct RFC3339Tests {
    /// The seconds since 1970 GNU `date` reads from `text`.
    static func gnuDate(_ text: String) throws -> Int? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/date")
        process.arguments = ["-u", "-d", text, "+%s"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(
        "signed times name the instant GNU date reads",
        arguments: [
            "1970-01-01T00:00:00Z", "2026-11-27T18:16:39Z", "2000-02-29T23:59:59Z", "2024-02-29T12:00:00Z", "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z", "1969-07-20T20:17:40Z", "2099-01-01T00:00:00Z", "1900-03-01T00:00:00Z",
        ])
    func signedTimes(text: String) throws {
        let date = try #require(RFC3339.parse(text))
        #expect(Int(date.timeIntervalSince1970) == (try Self.gnuDate(text)), "\(text)")
        #expect(RFC3339.format(date) == text, "a signed time reads back as written")
    }

    @Test("fractions of 1 to 9 digits")
    func fractions() throws {
        let date = try #require(RFC3339.parse("2026-05-01T12:00:00.123456789Z"))
        #expect(abs(date.timeIntervalSince1970 - 1_777_636_800.123456789) < 1e-6)
        #expect(RFC3339.parse("2026-05-01T12:00:00.5Z") != nil)
        #expect(RFC3339.read("2026-05-01T12:00:00.Z") == .failure(.shape))
        #expect(RFC3339.read("2026-05-01T12:00:00.1234567890Z") == .failure(.shape))
    }

    @Test(
        "refused in a signed time, naming why",
        arguments: [
            ("2026-12-01T01:00:00+01:00", RFC3339.Problem.offset), ("2026-12-01t00:00:00Z", .shape), ("2026-12-01T00:00:00z", .shape),
            ("2026-12-01T00:00:00", .noZone), ("2026-12-01", .shape), ("2026-12-01 00:00:00Z", .shape), (" 2026-12-01T00:00:00Z", .shape),
            ("2026-12-01T00:00:00Z ", .shape), ("2026-12-01T00:00:60Z", .leapSecond), ("2026-02-29T00:00:00Z", .invalidDate),
            ("2100-02-29T00:00:00Z", .invalidDate), ("2026-13-01T00:00:00Z", .invalidDate), ("2026-12-01T24:00:00Z", .invalidDate),
            ("0000-01-01T00:00:00Z", .invalidDate), ("2026-12-01T00:00:00+24:00", .shape), ("2026-12-01T00:00:00ZZ", .shape),
            ("+2026-12-01T00:00:00Z", .shape), ("２０２６-12-01T00:00:00Z", .shape),
        ])
    func refused(text: String, problem: RFC3339.Problem) {
        #expect(RFC3339.read(text) == .failure(problem), "\(text)")
        #expect(RFC3339.parse(text) == nil)
    }

    @Test("what an operator types may carry an offset and lower case, converted to UTC")
    func typed() throws {
        for (text, utc) in [
            ("2026-12-01T01:00:00+01:00", "2026-12-01T00:00:00Z"), ("2026-11-30T19:00:00-05:00", "2026-12-01T00:00:00Z"),
            ("2026-12-01t00:00:00z", "2026-12-01T00:00:00Z"), ("2026-12-01T05:30:00+05:30", "2026-12-01T00:00:00Z"),
        ] {
            guard case .success(let date) = RFC3339.read(text, typed: true) else {
                Issue.record("\(text) refused")
                continue
            }
            #expect(RFC3339.format(date) == utc)
            #expect(Int(date.timeIntervalSince1970) == (try Self.gnuDate(text)), "\(text)")
        }
        #expect(RFC3339.read("2026-12-01T00:00:00", typed: true) == .failure(.noZone))
        #expect(RFC3339.read("2026-12-01T00:00:00+1:00", typed: true) == .failure(.shape))
    }
}
