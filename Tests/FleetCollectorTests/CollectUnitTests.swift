import Foundation
import TestSupport
import Testing

/// Scripts/collect/clientctl-collect.service as systemd judges it: `systemd-analyze verify`
/// accepts it and `security` rates it hardened like serve's unit (exposure at most 2.0).
@Suite struct CollectUnitTests {
    @Test func theCollectorUnitVerifiesAndIsHardened() async throws {
        let dir = try TemporaryDirectory("collect-unit")
        let text = try String(contentsOfFile: ClientctlBinary.packagePath("Scripts/collect/clientctl-collect.service"), encoding: .utf8)
        #expect(text.contains("ExecStart=/usr/local/bin/clientctl collect "))
        // verify needs the program to exist: the unit pointed at the built clientctl.
        let unit = dir("clientctl-collect.service")
        try text.replacingOccurrences(of: "/usr/local/bin/clientctl", with: ClientctlBinary.path).write(
            toFile: unit, atomically: true, encoding: .utf8)
        let verify = try await Subprocess.run("systemd-analyze", ["verify", "--man=no", unit])
        #expect(verify.status == 0, "\(verify.output) \(verify.errorOutput)")
        #expect(verify.errorOutput.isEmpty, "\(verify.errorOutput)")
        let security = try await Subprocess.run("systemd-analyze", ["security", "--offline=yes", unit])
        let line = security.output.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
        let exposure = line.split(separator: ":").last.flatMap { Double($0.split(separator: " ").first ?? "") }
        #expect(exposure.map { $0 <= 2.0 } == true, "exposure: \(line) \(security.errorOutput)")
    }
}
