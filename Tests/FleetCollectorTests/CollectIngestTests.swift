import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// A real `clientctl collect` on 127.0.0.1 with SQLite: what it stores, and every refusal
/// (a 4xx naming why, nothing stored).
@Suite(.serialized) struct CollectIngestTests {
    typealias F = CollectorFixtures

    @Test func aBatchIsStoredAndItsRepeatIsADuplicate() async throws {
        let dir = try TemporaryDirectory("collect")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let batch = F.heartbeats(device: 1, count: 3).encoded()
        let first = try await collector.post(batch)
        #expect(first.status == 200)
        #expect(first.body == "{\"accepted\":3,\"duplicates\":0}\n")
        // At-least-once delivery: the same reports again, and one new one.
        let again = try await collector.post(F.heartbeats(device: 1, from: 3, count: 2).encoded())
        #expect(again.body == "{\"accepted\":1,\"duplicates\":1}\n")
        let compressed = try await collector.post(F.zstd(F.heartbeats(device: 2, count: 2).encoded()), encoding: "zstd")
        #expect(compressed.status == 200)
        #expect(compressed.body == "{\"accepted\":2,\"duplicates\":0}\n")
        #expect(try await F.storedReports(dir("reports.db")) == 6)
        #expect(collector.stop() == 0)
    }

    @Test func everyRefusalNamesWhyAndStoresNothing() async throws {
        let dir = try TemporaryDirectory("collect")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let good = String(decoding: F.heartbeats(device: 3).encoded(), as: UTF8.self)
        // A zstd bomb: 64 MiB of zeros squeezed into a few KiB.
        let bomb = F.zstd(Data(count: 64 << 20))
        #expect(bomb.count < ReportBatch.maxBytes)
        let oversized = Data(("{\"schema\":1,\"pad\":\"" + String(repeating: "x", count: ReportBatch.maxBytes) + "\"}").utf8)
        let cases: [(String, Data, String, String?, Int, String)] = [
            ("malformed JSON", Data("{\"schema\":1,".utf8), "application/json", nil, 400, "batch"),
            (
                "duplicate key", Data(good.replacingOccurrences(of: "{\"schema\":1,", with: "{\"schema\":1,\"schema\":1,").utf8), "application/json",
                nil, 400, "uplicate"
            ),
            (
                "wrong type", Data(good.replacingOccurrences(of: "\"seq\":1", with: "\"seq\":\"1\"").utf8), "application/json", nil, 400,
                "reports[0].seq: not an integer"
            ),
            (
                "unknown schema", Data(good.replacingOccurrences(of: "\"schema\":1", with: "\"schema\":3").utf8), "application/json", nil, 400,
                "schema: 3"
            ),
            (
                "unknown field", Data(good.replacingOccurrences(of: "\"running\"", with: "\"hostname\":\"x\",\"running\"").utf8), "application/json",
                nil, 400, "hostname: unknown field"
            ),
            (
                "unknown type", Data(good.replacingOccurrences(of: "heartbeat", with: "boot").utf8), "application/json", nil, 400,
                "unknown report type"
            ),
            ("oversized", oversized, "application/json", nil, 413, "262144-byte limit"),
            ("zstd bomb", bomb, "application/json", "zstd", 413, "decompressed body"),
            ("not zstd", Data(good.utf8), "application/json", "zstd", 400, "zstd"),
            ("gzip", Data(good.utf8), "application/json", "gzip", 415, "Content-Encoding"),
            ("text/plain", Data(good.utf8), "text/plain", nil, 415, "Content-Type"),
        ]
        for (name, body, type, encoding, status, why) in cases {
            let response = try await collector.post(body, contentType: type, encoding: encoding)
            #expect(response.status == status, "\(name): \(response.body)")
            let message = F.error(response)
            #expect(message?.contains(why) == true, "\(name): \(response.body)")
            #expect(response.body.split(separator: "\n").count == 1, "\(name): one line")
        }
        #expect(try await F.storedReports(dir("reports.db")) == 0)
        // The collector is still well: a good batch after them all is stored.
        #expect(try await collector.post(Data(good.utf8)).status == 200)
        #expect(try await F.storedReports(dir("reports.db")) == 1)
    }

    @Test func aFloodFromOneDeviceGets429WithRetryAfter() async throws {
        let dir = try TemporaryDirectory("collect")
        // 4 a minute: a burst of 1, then one every 15 s.
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--rate-per-device", "4"], scratch: dir.path)
        #expect(try await collector.post(F.heartbeats(device: 4, from: 1).encoded()).status == 200)
        let flooded = try await collector.post(F.heartbeats(device: 4, from: 2).encoded())
        #expect(flooded.status == 429)
        #expect(flooded["retry-after"].flatMap { Int($0) }.map { (1...15).contains($0) } == true, "\(flooded.headers)")
        #expect(F.error(flooded)?.contains("device \(F.device(4))") == true)
        // Another device is not held back by it.
        #expect(try await collector.post(F.heartbeats(device: 5).encoded()).status == 200)
        #expect(try await F.storedReports(dir("reports.db")) == 2)
    }

    @Test func aFloodFromOneAddressGets429() async throws {
        let dir = try TemporaryDirectory("collect")
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--rate-per-address", "8"], scratch: dir.path)
        var statuses: [Int] = []
        for n in 0..<4 { statuses.append(try await collector.post(F.heartbeats(device: 10 + n).encoded()).status) }
        #expect(statuses == [200, 200, 429, 429])
    }

    @Test func readsNeedTheReadToken() async throws {
        let dir = try TemporaryDirectory("collect")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let query = "v1/fleet?app=\(F.app)&channel=\(F.channel)"
        for path in [query, "metrics"] {
            let none = try await collector.read(path, token: nil)
            #expect(none.status == 401)
            #expect(F.error(none)?.contains("read token") == true)
            let wrong = try await collector.read(path, token: collector.token + "x")
            #expect(wrong.status == 401)
            #expect(F.error(wrong) == "wrong read token")
            #expect(try await collector.read(path, token: collector.token).status == 200)
        }
        #expect(try await collector.read("healthz", token: nil).body == "ok\n")
        #expect(try await collector.read("v1/fleet?app=a%20b&channel=x", token: collector.token).status == 400)
    }

    @Test func aSIGKILLMidIngestLosesNothingAcknowledged() async throws {
        let dir = try TemporaryDirectory("collect")
        let db = "sqlite:" + dir("reports.db")
        let collector = try await CollectProcess(database: db, arguments: ["--rate-per-device", "100000"], scratch: dir.path)
        // Eight devices post 100-report batches as fast as they can; the collector is killed
        // under them once ten batches of the 320 were acknowledged.
        let batchesAcked = Observed(0)
        let acknowledged = try await withThrowingTaskGroup(of: Int.self) { group in
            for device in 0..<8 {
                group.addTask {
                    var acked = 0
                    for b in 0..<Int64(40) {
                        let batch = F.heartbeats(device: 100 + device, from: b * 100 + 1, count: 100)
                        guard let response = try? await collector.post(batch.encoded()), response.status == 200 else { break }
                        acked += 100
                        batchesAcked.update { $0 += 1 }
                    }
                    return acked
                }
            }
            try await batchesAcked.wait(for: "ten batches acknowledged", timeout: .seconds(120)) { $0 >= 10 }
            collector.stop(SIGKILL)
            return try await group.reduce(0, +)
        }
        #expect(acknowledged > 0)
        let stored = try await F.storedReports(dir("reports.db"))
        #expect(stored >= acknowledged, "stored \(stored), acknowledged \(acknowledged)")
        // The database opens again for a new collector.
        let again = try await CollectProcess(database: db, scratch: dir.path)
        #expect(try await again.post(F.heartbeats(device: 99).encoded()).status == 200)
    }
}
