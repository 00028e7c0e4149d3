import ClientUpdater
import Foundation
import TestSupport
import Testing

/// A device's key and its reports as a user sees them, with the real binaries and a real
/// `clientctl collect` (docs/fleet-reports.md#device-keys): `init` makes the key (mode 0600),
/// `status` shows it, every batch is signed and the collector binds the id to it, and a
/// device whose journal state is lost still has its next reports stored, not taken for
/// duplicates and dropped.
@Suite struct DeviceKeyReportsTests {
    /// Reports the collector stored for `device` (its SQLite file, read by Python's sqlite3).
    static func stored(_ db: String, device: String) async throws -> Int {
        let run = try await Subprocess.run(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM reports WHERE device = ?', (sys.argv[2],)).fetchone()[0])",
                db, device,
            ])
        return Int(run.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Runs `clientctl install` until the journal has nothing pending (each run delivers for
    /// at most 3 s before it exits, as on a device; a loaded machine may need a second run),
    /// at most 60 s.
    static func deliverAll(_ f: DeviceFixture) async throws {
        let deadline = Date().addingTimeInterval(60)
        repeat {
            let install = try await ClientctlBinary.run(["install", "--root", f.layout.root])
            #expect(install.status == 0, "\(install.errorOutput)")
        } while ReportJournal(layout: f.layout).status.pending > 0 && Date() < deadline
        #expect(ReportJournal(layout: f.layout).status.pending == 0, "delivered within 60 s")
    }

    @Test func initMakesTheKeyAndStatusShowsIt() async throws {
        let tmp = try TemporaryDirectory("device-key")
        let run = try await ClientctlBinary.run([
            "init", "--root", tmp("root"), "--app", "com.example.notes", "--channel", "stable",
            "--manifest-url", "http://127.0.0.1:9/stable/manifest.json", "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"),
            "--shell-version", "1.0.0",
        ])
        #expect(run.status == 0, "\(run.errorOutput)")
        var info = stat()
        #expect(stat(tmp("root/device-key.pem"), &info) == 0 && info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))")
        let pub = try String(contentsOfFile: tmp("root/device-key.pub"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pub.utf8.count == 64)
        // The public file holds the private key's public half (openssl derives it).
        let derived = try await Subprocess.run("/usr/bin/openssl", ["pkey", "-in", tmp("root/device-key.pem"), "-pubout", "-outform", "DER"])
        #expect(derived.stdout.suffix(32).map { String(format: "%02x", $0) }.joined() == pub)
        let status = try await ClientctlBinary.run(["status", "--root", tmp("root")])
        #expect(status.output.contains("device key:      \(pub)\n"), "\(status.output)")
        // init --force keeps the key (the collector knows the device by it).
        let again = try await ClientctlBinary.run([
            "init", "--force", "--root", tmp("root"), "--app", "com.example.notes", "--channel", "stable",
            "--manifest-url", "http://127.0.0.1:9/stable/manifest.json", "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"),
            "--shell-version", "1.0.0",
        ])
        #expect(again.status == 0, "\(again.errorOutput)")
        #expect(try String(contentsOfFile: tmp("root/device-key.pub"), encoding: .utf8).hasPrefix(pub))
    }

    @Test func signedReportsBindTheKeyAndALostJournalStateLosesNothing() async throws {
        let f = try DeviceFixture()
        let dir = try TemporaryDirectory("device-key")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        f.config.reportURL = collector.baseURL
        try f.config.save(f.layout)
        try f.publish("1.0.0")
        try await Self.deliverAll(f)
        let device = try #require(DeviceIdFile.read(f.layout)?.text)
        let key = try #require(DeviceKeyFile.readPublic(f.layout)?.hex)
        let devices = try await collector.read("v1/devices", token: collector.token)
        #expect(devices.body.contains("\"device\":\"\(device)\"") && devices.body.contains("\"key\":\"\(key)\""), "\(devices.body)")
        #expect(devices.body.contains("\"status\":\"accepted\""), "\(devices.body)")
        let first = try await Self.stored(dir("reports.db"), device: device)
        #expect(first > 0)

        // An operator clears the stuck journal: reports/ goes, state and all.
        try FileManager.default.removeItem(atPath: f.layout.root + "/reports")
        let journal = ReportJournal(layout: f.layout)
        for _ in 0..<3 { journal.record(ReportDraft(.start, running: "1.0.0")) }
        try await Self.deliverAll(f)
        let after = try await Self.stored(dir("reports.db"), device: device)
        #expect(after >= first + 3, "the reports numbered from 1 again were stored (\(first) → \(after)), not answered as duplicates")
        #expect(collector.stop() == 0)
    }
}
