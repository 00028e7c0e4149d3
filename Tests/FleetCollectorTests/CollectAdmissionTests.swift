import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// Device keys and admission against a real `clientctl collect` (docs/fleet-reports.md#device-keys,
/// #admission): a key binds its device id on first sight, nobody else speaks for that id,
/// and under `manual` or `listed` admission a device's reports count only once admitted.
@Suite struct CollectAdmissionTests {
    typealias F = CollectorFixtures

    /// The fleet summary's device count, read with the read token.
    static func devices(_ collector: CollectProcess) async throws -> Int {
        let answer = try await collector.read("v1/fleet?app=\(F.app)&channel=\(F.channel)", token: collector.token)
        let object = try #require(try JSONSerialization.jsonObject(with: answer.data) as? [String: Any])
        return try #require(object["devices"] as? Int)
    }

    /// Whether `device`'s batch comes to count (answered without `held`) within 60 s: the
    /// admit file is read by a service as the collector starts, so its first read is awaited.
    static func counted(_ device: DeviceSigner, by collector: CollectProcess) async throws -> Bool {
        do {
            try await Poll.until("the batch to count", timeout: 60, every: .milliseconds(100)) {
                let probe = try device.signed(F.heartbeats(device: 1, count: 1))
                let answer = try await collector.post(probe.body, headers: probe.headers)
                return answer.status == 200 && !answer.body.contains("held")
            }
            return true
        } catch is HarnessError {
            return false
        }
    }

    static func adminToken(_ dir: TemporaryDirectory) throws -> String {
        let path = dir("admin.token")
        try Data("admin-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        return path
    }

    /// A signed batch binds its key; another key, an unsigned batch, a bad signature or a
    /// signature on a schema-1 batch for that id are refused, each naming why, nothing stored.
    @Test func aKeyBindsItsDeviceAndNobodyElseSpeaksForIt() async throws {
        let dir = try TemporaryDirectory("admission")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let device = try DeviceSigner()
        let first = try device.signed(F.heartbeats(device: 1, count: 2))
        let stored = try await collector.post(first.body, headers: first.headers)
        #expect(stored.status == 200 && stored.body == "{\"accepted\":2,\"duplicates\":0}\n", "\(stored.body)")

        let forger = try DeviceSigner()
        let forged = try forger.signed(F.heartbeats(device: 1, from: 3, count: 5))
        let refused = try await collector.post(forged.body, headers: forged.headers)
        #expect(refused.status == 409 && F.error(refused)?.contains("bound to another key") == true, "\(refused.body)")
        let unsigned = try await collector.post(F.heartbeats(device: 1, from: 3, count: 5).encoded())
        #expect(unsigned.status == 409 && F.error(unsigned)?.contains("unsigned batches for it are refused") == true, "\(unsigned.body)")
        // The right key named, but the body changed after signing.
        let tampered = Data(String(decoding: first.body, as: UTF8.self).replacingOccurrences(of: "\"seq\":1", with: "\"seq\":9").utf8)
        let bad = try await collector.post(tampered, headers: first.headers)
        #expect(bad.status == 401 && F.error(bad) == "the signature does not match the batch and its key", "\(bad.body)")
        let missing = try await collector.post(first.body)
        #expect(missing.status == 401 && F.error(missing)?.hasPrefix("no Clientctl-Signature header") == true, "\(missing.body)")
        // The one hex rule: the right signature in uppercase digits is not lowercase hex.
        let upper = try await collector.post(
            first.body, headers: first.headers.map { $0.uppercased().replacingOccurrences(of: "CLIENTCTL-SIGNATURE", with: "Clientctl-Signature") })
        #expect(upper.status == 401 && F.error(upper) == "Clientctl-Signature: not 128 hex digits", "\(upper.body)")
        #expect(try await F.storedReports(dir("reports.db")) == 2)

        // The device itself goes on; its sequence numbers cannot be taken by the forger.
        let next = try device.signed(F.heartbeats(device: 1, from: 3, count: 1))
        #expect(try await collector.post(next.body, headers: next.headers).status == 200)
        #expect(try await F.storedReports(dir("reports.db")) == 3)
        let metrics = try await collector.read("metrics", token: collector.token).body
        #expect(metrics.contains("fleet_collector_batches_refused_total{reason=\"key-mismatch\"} 1"), "\(metrics)")
        #expect(metrics.contains("fleet_collector_batches_refused_total{reason=\"unsigned\"} 1"), "\(metrics)")
        #expect(metrics.contains("fleet_collector_batches_refused_total{reason=\"bad-signature\"} 3"), "\(metrics)")
        #expect(collector.stop() == 0)
    }

    /// A device whose journal state was lost numbers its reports from 1 again, in a new
    /// stream: the collector stores them as new, not as duplicates of what it holds.
    @Test func aNewStreamIsNeverTakenForDuplicates() async throws {
        let dir = try TemporaryDirectory("admission")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let device = try DeviceSigner()
        let before = try device.signed(F.heartbeats(device: 1, count: 3))
        #expect(try await collector.post(before.body, headers: before.headers).body == "{\"accepted\":3,\"duplicates\":0}\n")
        let again = try device.signed(F.heartbeats(device: 1, count: 3))
        #expect(try await collector.post(again.body, headers: again.headers).body == "{\"accepted\":0,\"duplicates\":3}\n")
        let after = try device.signed(F.heartbeats(device: 1, count: 3), stream: "00000000000000aa")
        #expect(try await collector.post(after.body, headers: after.headers).body == "{\"accepted\":3,\"duplicates\":0}\n")
        #expect(try await F.storedReports(dir("reports.db")) == 6)
        #expect(collector.stop() == 0)
    }

    /// `--admission manual`: new keys wait as pending, their reports held apart (in no
    /// summary, counted in the metrics); `fleet devices` lists them, `fleet admit` (real
    /// binary) brings one in with its reports, `fleet reject` shuts another out, and an
    /// unsigned batch is refused.
    @Test func manualAdmissionHoldsNewDevicesUntilAnOperatorAdmitsThem() async throws {
        let dir = try TemporaryDirectory("admission")
        let admin = try Self.adminToken(dir)
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--admission", "manual", "--admin-token-file", admin], scratch: dir.path)
        let a = try DeviceSigner()
        let b = try DeviceSigner()
        for (n, signer) in [(1, a), (2, b)] {
            let batch = try signer.signed(F.heartbeats(device: n, count: 4))
            let held = try await collector.post(batch.body, headers: batch.headers)
            #expect(held.status == 200 && held.body == "{\"accepted\":4,\"duplicates\":0,\"held\":true}\n", "\(held.body)")
        }
        let unsigned = try await collector.post(F.heartbeats(device: 3).encoded())
        #expect(unsigned.status == 403 && F.error(unsigned)?.contains("admits manual devices only") == true, "\(unsigned.body)")
        #expect(try await Self.devices(collector) == 0)
        #expect(try await F.storedReports(dir("reports.db")) == 0)
        let metrics = try await collector.read("metrics", token: collector.token).body
        #expect(metrics.contains("fleet_collector_reports_held_total 8"), "\(metrics)")

        let common = ["--collector", collector.baseURL]
        let listed = try await ClientctlBinary.run(
            ["fleet", "devices"] + common + ["--token-file", collector.tokenPath, "--status", "pending", "--wide"])
        #expect(listed.status == 0, "\(listed.errorOutput)")
        #expect(listed.output.hasPrefix("admission: manual; 0 accepted, 2 pending, 0 rejected\n"), "\(listed.output)")
        // STATUS DEVICE KEY APP/CHANNEL FIRST SEEN LAST SEEN HELD LABELS: each key's row holds 4 reports.
        for key in [a.publicKey, b.publicKey] {
            let cells = listed.output.split(separator: "\n").first { $0.contains(key) }?.split(separator: " ")
            #expect(cells?.first == "pending" && cells?.count ?? 0 >= 7 && cells?[6] == "4", "\(listed.output)")
        }

        let admit = try await ClientctlBinary.run(["fleet", "admit"] + common + ["--token-file", admin, a.publicKey])
        #expect(
            admit.status == 0 && admit.output == "admitted 1 device now; 4 held reports joined the fleet's\n", "\(admit.output) \(admit.errorOutput)")
        #expect(try await Self.devices(collector) == 1)
        #expect(try await F.storedReports(dir("reports.db")) == 4)
        let more = try a.signed(F.heartbeats(device: 1, from: 5, count: 1))
        #expect(try await collector.post(more.body, headers: more.headers).body == "{\"accepted\":1,\"duplicates\":0}\n")

        let reject = try await ClientctlBinary.run(["fleet", "reject"] + common + ["--token-file", admin, F.device(2)])
        #expect(reject.status == 0 && reject.output == "rejected 1 device; 4 held reports deleted\n", "\(reject.output) \(reject.errorOutput)")
        let shut = try b.signed(F.heartbeats(device: 2, from: 5, count: 1))
        let refused = try await collector.post(shut.body, headers: shut.headers)
        #expect(refused.status == 403 && F.error(refused)?.contains("rejected") == true, "\(refused.body)")

        // The read token does not admit; a name that is not a key is refused before any request.
        let wrongToken = try await ClientctlBinary.run(["fleet", "admit"] + common + ["--token-file", collector.tokenPath, b.publicKey])
        #expect(wrongToken.status == 78 && wrongToken.errorOutput.contains("401"), "\(wrongToken.errorOutput)")
        let notAKey = try await ClientctlBinary.run(["fleet", "admit"] + common + ["--token-file", admin, "zz"])
        #expect(notAKey.status == 64 && notAKey.errorOutput.contains("zz: not a device key"), "\(notAKey.errorOutput)")
        #expect(try await Self.devices(collector) == 1)
        #expect(collector.stop() == 0)
    }

    /// `--admission listed` with `--admit-file`: the keys a provisioning step listed count at
    /// their first batch; any other key is held; a file line that is not a key stops the
    /// collector at start with a line naming it (64).
    @Test func listedAdmissionCountsTheKeysOfTheAdmitFile() async throws {
        let dir = try TemporaryDirectory("admission")
        let listedDevice = try DeviceSigner()
        let stranger = try DeviceSigner()
        try Data("# provisioned 2026-11-26\n\(listedDevice.publicKey)\n\n".utf8).write(to: URL(fileURLWithPath: dir("keys")))
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--admission", "listed", "--admit-file", dir("keys")], scratch: dir.path)
        #expect(try await Self.counted(listedDevice, by: collector), "the listed key's batch was never counted")
        let other = try stranger.signed(F.heartbeats(device: 2, count: 1))
        #expect(try await collector.post(other.body, headers: other.headers).body == "{\"accepted\":1,\"duplicates\":0,\"held\":true}\n")
        #expect(try await Self.devices(collector) == 1)
        #expect(collector.stop() == 0)

        try Data("\(listedDevice.publicKey)\nnot-a-key\n".utf8).write(to: URL(fileURLWithPath: dir("bad-keys")))
        let refused = try await ClientctlBinary.run(
            [
                "collect", "--listen", "127.0.0.1:0", "--database", "sqlite:" + dir("other.db"), "--read-token-file", collector.tokenPath,
                "--admission", "listed", "--admit-file", dir("bad-keys"),
            ])
        #expect(refused.status == 64 && refused.errorOutput.contains("bad-keys:2: not a device key"), "\(refused.errorOutput)")
    }

    /// A database a collector of schema 1 wrote (reports keyed by device and seq) is brought
    /// forward at start: every report kept, and the devices' first sight recorded.
    @Test func aSchemaOneDatabaseIsBroughtForwardWithEveryReport() async throws {
        let dir = try TemporaryDirectory("admission")
        // Received a minute ago: within the retention the collector prunes by.
        let base = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript('''
            CREATE TABLE collector_schema (version INTEGER NOT NULL);
            INSERT INTO collector_schema VALUES (1);
            CREATE TABLE reports (device TEXT NOT NULL, seq BIGINT NOT NULL, app TEXT NOT NULL, channel TEXT NOT NULL,
              time_ms BIGINT NOT NULL, received_ms BIGINT NOT NULL, type TEXT NOT NULL, running TEXT NOT NULL,
              shell TEXT, version TEXT, from_version TEXT, reason TEXT, detail TEXT, via TEXT,
              bytes BIGINT, ms BIGINT, count BIGINT, rollout_percent INTEGER, rollout_paused INTEGER, PRIMARY KEY (device, seq));
            CREATE INDEX reports_by_channel ON reports (app, channel, time_ms);
            CREATE INDEX reports_by_received ON reports (received_ms);
            CREATE TABLE devices (app TEXT NOT NULL, channel TEXT NOT NULL, device TEXT NOT NULL, last_ms BIGINT NOT NULL,
              running TEXT NOT NULL, received_ms BIGINT NOT NULL, PRIMARY KEY (app, channel, device));
            ''')
            for seq in range(1, 4):
                db.execute("INSERT INTO reports (device, seq, app, channel, time_ms, received_ms, type, running) VALUES (?, ?, ?, ?, ?, ?, 'heartbeat', '1.0.0')",
                           ('\(F.device(7))', seq, '\(F.app)', '\(F.channel)', \(base) + seq, \(base + 500) + seq))
            db.execute("INSERT INTO devices VALUES ('\(F.app)', '\(F.channel)', '\(F.device(7))', \(base + 3), '1.0.0', \(base + 503))")
            db.commit()
            """
        let made = try await Subprocess.run("/usr/bin/python3", ["-c", script, dir("old.db")])
        #expect(made.status == 0, "\(made.errorOutput)")
        let collector = try await CollectProcess(database: "sqlite:" + dir("old.db"), scratch: dir.path)
        #expect(try await F.storedReports(dir("old.db")) == 3)
        #expect(try await Self.devices(collector) == 1)
        // An unsigned device of before goes on: its next report is new, its old ones duplicates.
        let next = try await collector.post(F.heartbeats(device: 7, from: 3, count: 2).encoded())
        #expect(next.body == "{\"accepted\":1,\"duplicates\":1}\n", "\(next.body)")
        #expect(collector.stop() == 0)
        let check = try await Subprocess.run(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print(db.execute('SELECT MAX(version) FROM collector_schema').fetchone()[0], db.execute('SELECT first_ms, quote(labels) FROM devices').fetchone())",
                dir("old.db"),
            ])
        #expect(check.output == "5 (\(base + 501), \"''\")\n", "\(check.output) \(check.errorOutput)")
    }

    /// A duplicate (device, stream, seq) with other content is skipped and moves nothing: the
    /// device's current version stays the one its stored reports say.
    @Test func aDuplicateWithOtherContentDoesNotMoveTheDevicesVersion() async throws {
        let dir = try TemporaryDirectory("admission")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let now = Date().timeIntervalSince1970
        let first = F.batch(device: 1, [F.report(1, .heartbeat, at: now - 60, running: "1.0.0")])
        #expect(try await collector.post(first.encoded()).body == "{\"accepted\":1,\"duplicates\":0}\n")
        let forged = F.batch(device: 1, [F.report(1, .heartbeat, at: now - 1, running: "9.9.9")])
        #expect(try await collector.post(forged.encoded()).body == "{\"accepted\":0,\"duplicates\":1}\n")
        let answer = try await collector.read("v1/fleet?app=\(F.app)&channel=\(F.channel)", token: collector.token)
        let summary = try FleetSummary.decoder().decode(FleetSummary.self, from: answer.data)
        #expect(summary.versions.first { $0.version == "1.0.0" }?.devicesNow == 1, "\(answer.body)")
        #expect(summary.versions.allSatisfy { $0.version != "9.9.9" || $0.devicesNow == 0 }, "\(answer.body)")
        #expect(collector.stop() == 0)
    }

    /// `--admit-file-key`: the list admits only when `FILE.sig` is its signature by the
    /// provisioning key (made here by openssl itself, as a provisioning step would); a list
    /// changed after signing, or one without its signature, stops the collector at start
    /// with a line naming why.
    @Test func aSignedAdmitListCountsOnlyWhenItsSignatureVerifies() async throws {
        let dir = try TemporaryDirectory("admission")
        let keygen = try await ClientctlBinary.run(["keygen", "--out", dir("provisioning")])
        #expect(keygen.status == 0, "\(keygen.errorOutput)")
        let device = try DeviceSigner()
        try Data("\(device.publicKey)\n".utf8).write(to: URL(fileURLWithPath: dir("keys")))
        let sign = try await Subprocess.run(
            "/usr/bin/openssl", ["pkeyutl", "-sign", "-rawin", "-inkey", dir("provisioning.pem"), "-in", dir("keys"), "-out", dir("keys.sig")])
        #expect(sign.status == 0, "\(sign.errorOutput)")
        let arguments = ["--admission", "listed", "--admit-file", dir("keys"), "--admit-file-key", dir("provisioning.pub.pem")]
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), arguments: arguments, scratch: dir.path)
        #expect(try await Self.counted(device, by: collector), "the signed list's key was never admitted")
        #expect(collector.stop() == 0)

        func start(_ extra: [String]) async throws -> Subprocess.Result {
            try await ClientctlBinary.run(
                ["collect", "--listen", "127.0.0.1:0", "--database", "sqlite:" + dir("other.db"), "--read-token-file", collector.tokenPath]
                    + extra)
        }
        // A key slipped into the list after it was signed.
        try Data("\(device.publicKey)\n\(try DeviceSigner().publicKey)\n".utf8).write(to: URL(fileURLWithPath: dir("keys")))
        let tampered = try await start(arguments)
        #expect(tampered.status == 65 && tampered.errorOutput.contains("keys.sig is not a signature of this list"), "\(tampered.errorOutput)")
        try FileManager.default.removeItem(atPath: dir("keys.sig"))
        let unsigned = try await start(arguments)
        #expect(unsigned.status == 66 && unsigned.errorOutput.contains("asks for a signed list"), "\(unsigned.errorOutput)")
        let alone = try await start(["--admit-file-key", dir("provisioning.pub.pem")])
        #expect(alone.status == 64 && alone.errorOutput.contains("--admit-file-key goes with --admit-file"), "\(alone.errorOutput)")
    }
}
