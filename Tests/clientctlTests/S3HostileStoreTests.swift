import ClientUpdater
import Foundation
import TestSupport
import Testing

/// `clientctl push` against a store that misbehaves in ways a real S3 server does not
/// (``ScriptedS3`` on 127.0.0.1; the real server's behaviour is tested in ``S3PushTests``).
/// Each case says what S3 does instead (AWS S3 API Reference, PutObject, GetObject and
/// ListObjectsV2).
@Suite struct S3HostileStoreTests {
    let dir: TemporaryDirectory
    let key = ClientctlBinary.packagePath("Keys/test-signing.pem")

    init() throws { dir = try TemporaryDirectory("s3-hostile") }

    func publish(_ version: String, into folder: String) async throws {
        let source = dir("src-\(version)")
        if !FileManager.default.fileExists(atPath: source) {
            try FileManager.default.copyItem(atPath: ClientctlBinary.packagePath("Fixtures/sample-client"), toPath: source)
            try Data("export const version = '\(version)';\n".utf8).write(to: URL(fileURLWithPath: source + "/version.js"))
        }
        let r = try await ClientctlBinary.run([
            "publish", source, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
            "--key", key, "--out", folder,
        ])
        #expect(r.status == 0, "\(r.errorOutput)")
    }

    func push(_ folder: String, _ store: ScriptedS3, _ extra: [String] = []) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(["push", folder, store.url("notes"), "--endpoint", store.endpoint] + extra, environment: store.environment)
    }

    /// S3 answers a `PUT` it stored with `200` (PutObject), or `412`/`409` for a failed
    /// condition; a `404` to a `PUT` (here: a gateway that has no route for the pointers) means
    /// nothing was stored. The push must not report the release as published.
    @Test func aPointerWriteAnswered404FailsThePush() async throws {
        try await publish("1.0.0", into: dir("rel"))
        let store = try ScriptedS3 { request in
            let pointer = request.path.hasSuffix("/index.json") || request.path.hasSuffix("/manifest.json")
            return request.method == "PUT" && pointer ? ScriptedS3.error(404, "NoSuchKey") : nil
        }
        defer { store.stop() }
        let r = try await push(dir("rel"), store)
        #expect(r.status == 73, "\(r.status) \(r.output) \(r.errorOutput)")
        #expect(!r.output.contains("new: 1.0.0"), "\(r.output)")
        #expect(
            r.errorOutput.contains("PUT s3://scripted/notes/stable/index.json: HTTP 404 (NoSuchKey: NoSuchKey), not a stored write"),
            "\(r.errorOutput)")
        #expect(r.errorOutput.contains("neither pointer was written"), "\(r.errorOutput)")
        #expect(store.object("notes/stable/manifest.json") == nil)
    }

    /// S3 is strongly consistent: a GET after a successful PUT returns the bytes written
    /// (Amazon S3 User Guide, "Amazon S3 data consistency model"). A store that answers
    /// `200` and then does not hold the pointers (here: it keeps no PUT body) is reported.
    @Test func pointersThatDoNotReadBackFailThePush() async throws {
        try await publish("1.0.0", into: dir("rel"))
        let store = try ScriptedS3()
        defer { store.stop() }
        let r = try await push(dir("rel"), store)
        #expect(r.status == 73, "\(r.status) \(r.output) \(r.errorOutput)")
        #expect(!r.output.contains("new: 1.0.0"), "\(r.output)")
        #expect(
            r.errorOutput.contains("s3://scripted/notes/stable did not keep this push's write: read back, index.json answers HTTP 404"),
            "\(r.errorOutput)")
        #expect(r.errorOutput.contains("manifest.json answers HTTP 404"), "\(r.errorOutput)")
        // Read back after it was written.
        let methods = store.log.filter { $0.request.path.hasSuffix("/index.json") }.map(\.request.method)
        #expect(Array(methods.drop { $0 != "PUT" }.prefix(2)) == ["PUT", "GET"], "\(methods)")
    }

    /// ListObjectsV2 sends `NextContinuationToken` only when `IsTruncated` is true, and each
    /// token continues after the last key of its page: S3 never answers the same token twice
    /// in one listing. A store that does (here 50 times, then it ends the listing so the test
    /// ends even without the fix) is refused at the first repeat, and nothing is deleted.
    @Test func aListingThatRepeatsItsTokenIsRefusedAtOnce() async throws {
        try await publish("1.0.0", into: dir("rel"))
        try await publish("1.1.0", into: dir("rel"))
        let channel = dir("rel") + "/stable"
        let files = try FileManager.default.subpathsOfDirectory(atPath: channel).filter { !$0.hasPrefix("pending") && !$0.hasPrefix(".") }
        let pages = RequestCounter()
        let store = try ScriptedS3 { request in
            guard ScriptedS3.key(of: request) == nil, request.queryItems["list-type"] == "2" else { return nil }
            let listed = files.map { (key: "notes/stable/" + $0, size: 1) }
            return ScriptedS3.listPage(listed, truncated: pages.next() <= 50, next: "token-1")
        }
        defer { store.stop() }
        for path in files {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: channel + "/" + path, isDirectory: &isFolder), !isFolder.boolValue {
                store.store("notes/stable/" + path, try Data(contentsOf: URL(fileURLWithPath: channel + "/" + path)))
            }
        }
        let r = try await push(dir("rel"), store, ["--keep", "2", "--prune-grace", "0"])
        #expect(r.status == 65, "\(r.status) \(r.output) \(r.errorOutput)")
        #expect(
            r.errorOutput.contains("listing s3://scripted/notes/stable/: page 2 repeats continuation token 'token-1' of an earlier page"),
            "\(r.errorOutput)")
        #expect(r.errorOutput.contains("the release was pushed, nothing was pruned"), "\(r.errorOutput)")
        #expect(pages.value == 2, "listing requests: \(pages.value)")
        #expect(!store.log.contains { $0.request.method == "DELETE" })
    }

    /// S3 answers a GET with the object's bytes; a `manifest.json` of 300 MiB (sent with or
    /// without a `Content-Length`) is refused at its 64 KiB limit, and the push stops reading
    /// there: the stand-in counts the bytes it got out before the client closed the
    /// connection, far below the 300 MiB it offered (the old push read them all, 939 MB RSS).
    /// On a host whose socket buffers could hold that much, it offers four times what they
    /// hold, so a push that read it all still fails.
    @Test(arguments: [("manifest.json", 64 * 1024, false), ("manifest.json", 64 * 1024, true), ("index.json", 16 << 20, false)])
    func anOversizedPointerIsRefusedWithoutReadingIt(name: String, limit: Int, declared: Bool) async throws {
        try await publish("1.0.0", into: dir("rel"))
        // Past what it read, the push leaves at most what the kernel's buffers hold and
        // AsyncHTTPClient's read-ahead in flight (KernelSocketBuffers).
        let bound = Int64(limit) + (try KernelSocketBuffers.inFlightBound())
        let size: Int64 = max(300 << 20, 4 * bound)
        let huge = dir("huge.json")
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        try FileHandle(forWritingAtPath: huge).map { try $0.truncate(atOffset: UInt64(size)) }  // sparse: no disk used
        let store = try ScriptedS3 { request in
            guard request.method == "GET", request.path.hasSuffix("/stable/" + name) else { return nil }
            var response = LoopbackResponse(status: 200, body: .file(path: huge, offset: 0, length: size))
            response.omitContentLength = !declared
            return response
        }
        let r = try await push(dir("rel"), store)
        store.stop()  // joins the server's threads: the byte counts are final
        #expect(r.status == 65, "\(r.status) \(r.errorOutput)")
        #expect(r.errorOutput.contains("s3://scripted/notes/stable/\(name) is over \(limit) bytes"), "\(r.errorOutput)")
        let sent = store.log.filter { $0.request.path.hasSuffix("/" + name) }.map(\.bodyBytesSent).reduce(0, +)
        #expect(sent < bound, "the store got \(sent) of \(size) bytes out before the push closed the connection (bound \(bound))")
        #expect(store.keys.isEmpty, "nothing was uploaded: \(store.keys)")
    }
}
