import ClientFoundation
import ClientServer
import ClientUpdater
import Foundation
import ServingCore
import TestSupport
import Testing

@Suite struct VersionSwitchTests {
    /// While the served version flips back and forth, every response is internally
    /// consistent: its ETag is the hash of its own body, and the body is one version's.
    @Test func aSwitchNeverMixesVersionsInOneResponse() async throws {
        let page = { (v: String) in Data("<html><head></head><body>\(v)</body></html>".utf8) }
        let root = try ArchiveRoot(versions: [
            "1.0.0": ["index.html": page("one"), "data.txt": Data(String(repeating: "1", count: 5000).utf8)],
            "2.0.0": ["index.html": page("two"), "data.txt": Data(String(repeating: "2", count: 7000).utf8)],
        ])
        let server = try ClientServer(configuration: ServerHarness.configuration(), logger: ServerHarness.quietLogger)
        let v1 = try ServedVersion.load(directory: root.serving("1.0.0"), configuration: server.configuration)
        let v2 = try ServedVersion.load(directory: root.serving("2.0.0"), configuration: server.configuration)
        server.activate(v1)
        #expect(server.currentVersionID == "1.0.0")
        try await ServerHarness.withServer(server) { port in
            let flipper = Task {
                for i in 0..<400 {
                    server.activate(i % 2 == 0 ? v2 : v1)
                    try await WorldTime.pass(.microseconds(200), "an operator's flips, racing the requests")
                }
            }
            var seen = Set<Int>()
            try await withThrowingTaskGroup(of: HTTPResult.self) { group in
                for _ in 0..<60 { group.addTask { try await LoopbackHTTP.request(port: port, "/data.txt") } }
                for try await response in group {
                    #expect(response.status == 200)
                    #expect(response["etag"] == "\"" + Digest.hex(.sha256, of: response.body) + "\"")
                    #expect(Set(response.body).count == 1, "one version's bytes only")
                    #expect(response["content-length"] == String(response.body.count))
                    seen.insert(response.body.count)
                }
            }
            try await flipper.value
            server.activate(v2)
            let after = try await LoopbackHTTP.request(port: port, "/")
            #expect(after.text.contains("two"))
            #expect(seen.isSubset(of: [5000, 7000]))
        }
        #expect(server.currentVersionID == "2.0.0")
    }

    @Test func nothingActiveIs503() async throws {
        let server = try ClientServer(configuration: ServerHarness.configuration(), logger: ServerHarness.quietLogger)
        try await ServerHarness.withServer(server) { port in
            let response = try await LoopbackHTTP.request(port: port, "/")
            #expect(response.status == 503)
        }
    }
}
