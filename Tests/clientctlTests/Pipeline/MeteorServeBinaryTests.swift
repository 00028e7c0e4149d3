import Foundation
import TestSupport
import Testing

/// `clientctl init --meteor-url` and `clientctl serve` as a user runs them, on the reference
/// plugin's bundled app: a sample of the serving scenarios through the real binary (the
/// full 2–26 set runs against the same server in-process in ClientServerTests).
@Suite(
    .enabled(
        if: MeteorFixtures.referenceAvailable,
        "../shared/fixtures/meteor is absent: the Meteor reference fixtures are not in this repository"))
struct MeteorServeBinaryTests {
    /// HEAD-less GET through curl returning status, headers (lowercased names) and body.
    static func fetch(_ url: String, headers: [String] = []) async throws -> (status: Int, headers: [String: String], body: String) {
        let dir = try TemporaryDirectory("curl")
        var args = ["-s", "-D", dir("head"), "-o", dir("body"), "--max-time", "20"]
        for h in headers { args += ["-H", h] }
        let result = try await Subprocess.run("curl", args + [url], gate: nil)
        guard result.status == 0 else { throw HarnessError("curl \(url): \(result.errorOutput)") }
        let head = try String(contentsOfFile: dir("head"), encoding: .utf8)
        var fields: [String: String] = [:]
        var status = 0
        for line in head.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") {
                status = Int(line.split(separator: " ")[1]) ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return (status, fields, (try? String(contentsOfFile: dir("body"), encoding: .utf8)) ?? "")
    }

    @Test func initAndServeAMeteorRootWithTheBinary() async throws {
        let reference = try #require(MeteorFixtures.reference)
        let tmp = try TemporaryDirectory("meteor-serve")
        let www = tmp("www")
        let copy = try await Subprocess.run("cp", ["-R", reference + "/bundled_www", www])
        #expect(copy.status == 0)
        _ = try await Subprocess.run("chmod", ["-R", "u+w", www])
        let made = try await ClientctlBinary.run([
            "init", "--root", tmp("device"), "--meteor-url", "http://127.0.0.1:9/",
            "--embedded", www + "/application",
        ])
        #expect(made.status == 0, "\(made.errorOutput)")
        #expect(made.errorOutput.contains("1waqgcidafgwubeqj8o"), "appId read from the embedded index.html")

        let serve = try await ServeProcess(root: tmp("device"), scratch: tmp.path)
        let base = serve.baseURL
        let index = try await Self.fetch(base)
        #expect(index.status == 200)
        #expect(index.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(index.body.contains("<title>mobileapp</title>"))
        #expect(index.body.components(separatedBy: "data-clientctl-shim").count == 2, "the shim is injected once")

        let someFile = try await Self.fetch(base + "some-file")
        let expected = try String(contentsOfFile: www + "/application/app/some-file", encoding: .utf8)
        #expect(someFile.status == 200 && someFile.body == expected)

        let plugins = try await Self.fetch(base + "cordova_plugins.js")
        #expect(plugins.status == 200)
        #expect(plugins.body == (try String(contentsOfFile: www + "/cordova_plugins.js", encoding: .utf8)))

        for path in ["anything", "application/packages/meteor.js", "not-in-manifest", "application/not-in-manifest"] {
            let fallback = try await Self.fetch(base + path)
            #expect(fallback.status == 200 && fallback.body.contains("<title>mobileapp</title>"), "/\(path) falls back to index.html")
        }
        await #expect(try Self.fetch(base + "favicon.ico").status == 404)

        let meteor = try await Self.fetch(base + "packages/meteor.js?57d11a30155349aa5106f8150cee35eac5f4764c")
        #expect(meteor.status == 200)
        #expect(meteor.headers["cache-control"]?.contains("max-age=31536000") == true)
        let etag = try #require(meteor.headers["etag"])
        #expect(etag.contains("57d11a30155349aa5106f8150cee35eac5f4764c"))
        let revalidated = try await Self.fetch(base + "packages/meteor.js", headers: ["If-None-Match: \(etag)"])
        #expect(revalidated.status == 304)

        #expect(serve.stop() == 0, "SIGTERM stops serve cleanly: \(serve.stderr)")
    }
}
