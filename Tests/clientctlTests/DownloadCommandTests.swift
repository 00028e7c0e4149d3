import ClientFoundation
import Foundation
import TestSupport
import Testing

/// `clientctl init --download-window/--download-rate/--metered/--metered-interface` and
/// `clientctl download set|show`, as the device owner runs them (docs/download-policy.md).
@Suite struct DownloadCommandTests {
    /// Set at `init`, shown, changed, cleared; every bad value refused with one line, exit 64,
    /// and config.json left byte for byte.
    @Test func theDownloadPolicyIsSetAtInitChangedLaterAndBadValuesChangeNothing() async throws {
        let rig = try TargetingRig()
        func initArgs(_ root: String) -> [String] {
            [
                "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
                "--manifest-url", rig.server.url("/stable/manifest.json").absoluteString,
                "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
            ]
        }
        for (flags, why) in [
            (["--download-window", "25:00-03:00"], "download window '25:00-03:00' has hour 25"),
            (["--download-rate", "fast"], "--download-rate 'fast' is not a rate"),
            (["--metered", "sometimes"], "--metered: metered 'sometimes' is not never, always or patches:SIZE"),
            (["--metered", "patches:5XB"], "no known size unit"),
            (["--metered-interface", "wwan0/1"], "--metered-interface 'wwan0/1' is not an interface name"),
        ] {
            let r = try await rig.clientctl(initArgs(rig.dir("bad")) + flags, expect: 64)
            #expect(r.errorOutput.split(separator: "\n").first?.contains(why) == true, "\(flags): \(r.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: rig.dir("bad")))
        }

        let root = rig.dir("dev")
        try await rig.clientctl(
            initArgs(root) + [
                "--download-window", "22:00-06:00@Europe/Berlin", "--download-window", "12:00-13:00@UTC", "--download-rate", "2MB/s",
                "--metered", "patches:5MB", "--metered-interface", "wwan0",
            ])
        let shown = try await rig.clientctl(["download", "show", "--root", root])
        #expect(
            shown.output
                == "windows: 22:00-06:00@Europe/Berlin, 12:00-13:00@UTC\nrate: 2MB/s\nmetered: patches:5MB\nmetered interfaces: wwan0\n")

        let config = try Data(contentsOf: URL(fileURLWithPath: root + "/config.json"))
        for (flags, why) in [
            (["--download-window", "02:00-02:00"], "download window '02:00-02:00' is empty"),
            (["--download-window", "02:00-04:00@Mars/Olympus"], "'Mars/Olympus' is not a known IANA time zone"),
            (["--download-rate", "1B/s"], "--download-rate '1B/s' is out of range"),
            (["--metered", "patches:"], "has no size"),
            (["--metered-interface", "averyveryverylongname0"], "is not an interface name"),
            (["--any-time", "--download-window", "01:00-02:00"], "contradict"),
            (["--no-rate", "--download-rate", "1MB/s"], "contradict"),
        ] {
            let r = try await rig.clientctl(["download", "set", "--root", root] + flags, expect: 64)
            #expect(r.errorOutput.contains(why) && r.errorOutput.split(separator: "\n").count == 1, "\(flags): \(r.errorOutput)")
        }
        let none = try await rig.clientctl(["download", "set", "--root", root], expect: 64)
        #expect(none.errorOutput.contains("name a change"), "\(none.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/config.json")) == config, "nothing written")

        let set = try await rig.clientctl(["download", "set", "--root", root, "--download-window", "01:00-05:00", "--metered", "never"])
        #expect(set.errorOutput.contains("windows: 01:00-05:00 (was 22:00-06:00@Europe/Berlin, 12:00-13:00@UTC)"), "\(set.errorOutput)")
        #expect(set.errorOutput.contains("metered: never (was patches:5MB)"), "\(set.errorOutput)")
        #expect(!set.errorOutput.contains("rate:"), "an unchanged setting is not said: \(set.errorOutput)")
        let json = try await rig.clientctl(["download", "show", "--root", root, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["downloadWindows"] as? [String] == ["01:00-05:00"])
        #expect(object["downloadRate"] as? String == "2MB/s")
        #expect(object["metered"] as? String == "never")
        #expect(object["meteredInterfaces"] as? [String] == ["wwan0"])

        try await rig.clientctl(["download", "set", "--root", root, "--any-time", "--no-rate", "--metered", "always", "--no-metered-interfaces"])
        let cleared = try await rig.clientctl(["download", "show", "--root", root])
        #expect(cleared.output == "windows: any time\nrate: no cap\nmetered: always\nmetered interfaces: none named\n")
        let again = try await rig.clientctl(["download", "set", "--root", root, "--any-time"])
        #expect(again.errorOutput.contains("download policy unchanged"))
        let stored = try String(contentsOfFile: root + "/config.json", encoding: .utf8)
        #expect(!stored.contains("download") && !stored.contains("metered"), "a cleared policy leaves config.json as a device that never set one")
    }
}
