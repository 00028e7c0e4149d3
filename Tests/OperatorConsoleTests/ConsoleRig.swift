import ArchivePublishing
import AuditTrail
import ClientFoundation
import ConsoleAccess
import DeviceIdentity
import FleetReports
import Foundation
import OperatorConsole
import SignedManifest
import Synchronization
import TestSupport
import Testing

/// A console over real parts on 127.0.0.1: a release folder whose trust root has a rollout
/// role (made by the built `clientctl`), a device following it over HTTP, a real
/// `clientctl collect` with manual admission, an operators file with an operator and a
/// viewer, and the console itself in this process on a manual monotonic clock.
final class ConsoleRig: Sendable {
    let d: DeviceFixture
    let collector: CollectProcess
    let adminTokenPath: String
    let operators: String
    let audit: String
    let console: OperatorConsole
    let port: Int
    let task: Task<Void, any Error>
    /// The store and the place in it `--push` names, when the rig pushes.
    let store: (s3: SeaweedS3, area: String)?
    /// The console's monotonic clock reading: tests advance it.
    let uptime = Reading()

    /// A monotonic clock's reading that only the test moves.
    final class Reading: Sendable {
        private let value = Mutex(Duration.seconds(1_000))
        var now: Duration { value.withLock { $0 } }
        func advance(_ by: Duration) { value.withLock { $0 += by } }
    }

    static let cookieName = "console_session"
    static let operatorPassword = "correct horse battery"
    static let viewerPassword = "viewer sees only"

    var base: String { "http://127.0.0.1:\(port)" }
    var origin: String { base }
    var guardKeyPath: String { d.tmp("keys/guard.pem") }

    /// Publishes 1.0.0 (installed and committed on the device) and 1.1.0 (not yet taken).
    init(push: Bool = false) async throws {
        d = try DeviceFixture()
        try FileManager.default.createDirectory(atPath: d.tmp("keys"), withIntermediateDirectories: true)
        try await Self.clientctl(["keygen", "--out", d.tmp("keys/guard")])
        let pub = ClientctlBinary.packagePath("Keys/test-signing.pub.pem")
        let draft = d.tmp("root-1.json")
        try await Self.clientctl([
            "root", "init", draft, "--app", "com.example.notes", "--channel", "stable", "--root-key", pub, "--release-key", pub,
            "--rollout-key", d.tmp("keys/guard.pub.pem"), "--expires", "365d",
        ])
        try await Self.clientctl(["root", "sign", draft, "--key", ClientctlBinary.packagePath("Keys/test-signing.pem")])
        try d.releases.writeRootBytes(Data(contentsOf: URL(fileURLWithPath: draft)), as: 1)
        try await d.installAndCommit(["1.0.0"])
        try d.publish("1.1.0")

        adminTokenPath = d.tmp("admin-token")
        try Data("admin-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: adminTokenPath))
        chmod(adminTokenPath, 0o600)
        collector = try await CollectProcess(
            database: "sqlite:" + d.tmp("reports.db"), arguments: ["--admission", "manual", "--admin-token-file", adminTokenPath],
            scratch: d.tmp.path)

        operators = d.tmp("operators.json")
        var file = OperatorFile()
        try file.add(OperatorAccount(name: "alice", role: .operator, passwordHash: try PasswordHash.make(Array(Self.operatorPassword.utf8))))
        try file.add(OperatorAccount(name: "victor", role: .viewer, passwordHash: try PasswordHash.make(Array(Self.viewerPassword.utf8))))
        try Data(file.encoded()).write(to: URL(fileURLWithPath: operators))
        chmod(operators, 0o600)
        audit = d.tmp("audit.jsonl")

        let keyPEM = try String(contentsOfFile: d.tmp("keys/guard.pem"), encoding: .utf8)
        if push {
            let s3 = try await SeaweedS3.shared()
            store = (s3, s3.freshArea("console"))
        } else {
            store = nil
        }
        var configuration = ConsoleConfiguration(
            host: "127.0.0.1", port: 0, operators: operators, collector: collector.baseURL, readToken: collector.token,
            adminToken: "admin-token-0123456789abcdef", releases: d.releases.path,
            signers: { [try Ed25519.PrivateKey(pem: keyPEM)] }, audit: audit)
        if let store {
            configuration.push = ReleasePush(
                location: try S3Location.resolve("s3://\(store.area)", endpoint: store.s3.endpoint, region: nil, environment: store.s3.environment))
        }
        let clock = uptime
        let console = OperatorConsole(configuration: configuration, uptime: { clock.now }, logger: .quiet)
        self.console = console
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        task = Task { try await console.runService { port in continuation.yield(port) } }
        var bound = 0
        for await port in ports {
            bound = port
            break
        }
        port = bound
    }

    deinit { task.cancel() }

    /// Stops the console and the collector.
    func stop() async {
        task.cancel()
        _ = try? await task.value
        collector.stop()
    }

    @discardableResult
    static func clientctl(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Subprocess.Result {
        let r = try await ClientctlBinary.run(args)
        #expect(r.status == 0, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    // MARK: HTTP as a browser would speak it

    func get(_ path: String, cookie: String? = nil) async throws -> CurlResponse {
        try await Curl.request(base + path, headers: cookie.map { ["Cookie: \(ConsoleRig.cookieName)=\($0)"] } ?? [])
    }

    /// POSTs a form; `origin` nil sends no Origin header.
    func post(_ path: String, _ fields: [(String, String)], cookie: String? = nil, origin: String?? = .some(nil)) async throws -> CurlResponse {
        var headers = ["Content-Type: application/x-www-form-urlencoded"]
        switch origin {
        case .some(.some(let value)): headers.append("Origin: \(value)")
        case .some(.none): headers.append("Origin: \(self.origin)")
        case .none: break
        }
        if let cookie { headers.append("Cookie: \(Self.cookieName)=\(cookie)") }
        return try await Curl.request(base + path, method: "POST", headers: headers, body: Data(Self.form(fields).utf8))
    }

    static func form(_ fields: [(String, String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    /// Logs in and returns the session cookie's value.
    func login(_ name: String = "alice", _ password: String = ConsoleRig.operatorPassword) async throws -> String {
        let r = try await post("/login", [("name", name), ("password", password)])
        #expect(r.status == 303, "login \(name): \(r.status) \(r.body)")
        let cookie = r["set-cookie"] ?? ""
        guard let value = cookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last else {
            throw HarnessError("no session cookie in \(cookie)")
        }
        return String(value)
    }

    /// The value of the first hidden field `name` in `html`.
    static func field(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    /// The CSRF token and restriction basis on the channel page.
    func actFields(cookie: String) async throws -> (csrf: String, basis: String, page: String) {
        let page = try await get("/channel/stable", cookie: cookie).body
        return (Self.field("csrf", in: page) ?? "", Self.field("basis", in: page) ?? "", page)
    }

    /// The audit trail's records.
    func trail() throws -> [AuditRecord] {
        guard FileManager.default.fileExists(atPath: audit) else { return [] }
        return try AuditTrail.read(audit).map(\.record)
    }

    /// The restriction in the release folder, if any.
    func restriction() throws -> Restriction? {
        guard let data = FileManager.default.contents(atPath: d.releases.channelDirectory + "/restriction.json") else { return nil }
        return try Restriction.parse(data, source: "restriction.json")
    }

    /// A device key: signs batches as `clientctl` devices do, so the collector holds its
    /// reports as pending under manual admission.
    struct Device {
        let key: Ed25519.PrivateKey
        let id: String

        init(_ n: Int) throws {
            key = try Ed25519.PrivateKey.generate()
            id = String(format: "%032x", n)
        }

        func send(_ reports: [FleetReport], labels: [String: String] = [:], to collector: CollectProcess) async throws {
            guard let device = DeviceID(id), let publicKey = DevicePublicKey(raw: key.publicKey.rawRepresentation) else {
                throw HarnessError("bad test device")
            }
            var batch = ReportBatch(device: device, app: "com.example.notes", channel: "stable", reports: reports)
            batch.labels = try DeviceLabels(labels)
            batch.key = publicKey
            batch.stream = "0000000000000001"
            let body = batch.encoded()
            let signature = try key.signature(for: Array(body)).map { String(format: "%02x", $0) }.joined()
            let r = try await collector.post(body, headers: ["\(ReportBatch.signatureHeader): \(signature)"])
            #expect(r.status == 200, "report batch: \(r.body)")
        }
    }
}
