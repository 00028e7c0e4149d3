import Foundation
import SignedManifest

/// The attacker of BENCHMARKS.md "The brake against one stolen device key": it holds the
/// private key of one admitted device (`device-key.pem`, taken from its root) and, right
/// after the release, signs batches for `ids` device ids it invented, each a trial of the
/// release and then a rollback of it (`pull`: force a halt of a good release) or a commit
/// (`cut`: hide a bad one behind invented healthy devices). Every batch is POSTed once to
/// the collector (one `curl` for all, as a script would), and the statuses are counted.
struct GuardAttacker {
    enum Mode: String {
        case pull
        case cut
    }

    var mode: Mode
    var ids: Int
    var key: Ed25519.PrivateKey
    var collector: String
    var app: String
    var channel: String
    var release: String
    var work: String

    /// The key of the device root at `root`, as the device signs with it.
    static func stolenKey(root: String) throws -> Ed25519.PrivateKey {
        try Ed25519.PrivateKey(pem: try String(contentsOfFile: root + "/device-key.pem", encoding: .utf8))
    }

    /// Posts one batch per invented id, dated `time`: the HTTP status of each, counted.
    func attack(at time: Date) throws -> [Int: Int] {
        let keyHex = key.publicKey.rawRepresentation.map { String(format: "%02x", $0) }.joined()
        let millis = Int64(time.timeIntervalSince1970 * 1000)
        var config = ""
        for n in 0..<ids {
            let device = String(format: "a77ac4e5%024x", n)
            let second =
                mode == .pull
                ? "{\"seq\":2,\"time\":\(millis + 61_000),\"type\":\"rolled-back\",\"running\":\"1.0.0\",\"version\":\"\(release)\",\"reason\":\"timed-out\"}"
                : "{\"seq\":2,\"time\":\(millis + 3_000),\"type\":\"committed\",\"running\":\"\(release)\",\"version\":\"\(release)\",\"ms\":900}"
            let body =
                "{\"schema\":2,\"device\":\"\(device)\",\"key\":\"\(keyHex)\",\"stream\":\"00000000000000a7\",\"app\":\"\(app)\","
                + "\"channel\":\"\(channel)\",\"reports\":[{\"seq\":1,\"time\":\(millis),\"type\":\"trial-started\",\"running\":\"\(release)\","
                + "\"version\":\"\(release)\"},\(second)]}"
            let signature = try key.signature(for: Array(body.utf8)).map { String(format: "%02x", $0) }.joined()
            let file = work + "/attack-\(n).json"
            try Data(body.utf8).write(to: URL(fileURLWithPath: file))
            if n > 0 { config += "next\n" }
            config += "url = \"\(collector)v1/reports\"\nrequest = POST\ndata-binary = \"@\(file)\"\n"
            config += "header = \"Content-Type: application/json\"\nheader = \"Clientctl-Signature: \(signature)\"\n"
            config += "output = /dev/null\nwrite-out = \"%{http_code}\\n\"\n"
        }
        let path = work + "/attack.curl"
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        let result = runChild("/usr/bin/curl", ["-sS", "--config", path], stderrFile: work + "/attack-stderr.log")
        var statuses: [Int: Int] = [:]
        for line in String(decoding: result.output, as: UTF8.self).split(separator: "\n") {
            if let status = Int(line) { statuses[status, default: 0] += 1 }
        }
        return statuses
    }
}

/// Admits every device's key (`clientctl fleet admit`, the admin token), 500 a request, so
/// the fleet counts under `manual` admission as a provisioned fleet would. Returns the
/// number of keys named.
func admitFleet(clientctl: String, collector: String, adminToken: String, roots: [String], stderrFile: String) throws -> Int {
    var keys: [String] = []
    for root in roots {
        let text = try String(contentsOfFile: root + "/device-key.pub", encoding: .utf8)
        keys.append(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    for start in stride(from: 0, to: keys.count, by: 500) {
        let chunk = Array(keys[start..<min(start + 500, keys.count)])
        let result = runChild(
            clientctl, ["fleet", "admit", "--collector", collector, "--token-file", adminToken] + chunk, stderrFile: stderrFile)
        guard result.status == 0 else { throw GuardAttackError("clientctl fleet admit exited \(result.status)") }
    }
    return keys.count
}

struct GuardAttackError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
