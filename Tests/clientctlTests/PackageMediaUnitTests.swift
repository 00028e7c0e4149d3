import Foundation
import TestSupport
import Testing

/// Issue 56: every package carries a udev rule, `/lib/udev/rules.d/61-PKG-media.rules`, and
/// a unit template, `/lib/systemd/system/PKG-media@.service`, so a packaged app installs
/// from a USB stick as it is plugged in, with no command typed
/// (docs/packaging.md#updates-from-removable-media). The unit is judged by systemd's own
/// tools on the unpacked package; the rule by its text, and, where udev's `udevadm` is at
/// hand, by udev itself evaluating it beside udev's own rules on simulated USB sticks and
/// disks and on this machine's disks.
@Suite(.serialized) struct PackageMediaUnitTests {
    static let pkg = PackageInputs.package
    /// The exposure the media unit may reach in `systemd-analyze security`: 0.0 to 10.0,
    /// higher meaning less sandboxing (systemd-analyze(1)); serve's bound is 2.0. What is
    /// left is what the job needs: a root it writes (`RootDirectory=`), local sockets, the
    /// clock read (`ProtectClock=` leaves `/dev/rtc` readable) and the group bits of
    /// `UMask=0027`, as serve has.
    static let exposureBound = 0.5

    /// `systemd-analyze verify` of the instance for `sdb1` (and of the serve unit beside it)
    /// in the unpacked package, with the programs its privileged steps run copied from this
    /// Debian at the paths the unit names and systemd's own units beside it; then
    /// `systemd-analyze security --offline=yes`, parsed and bounded. The two units run as
    /// one user with one state directory.
    @Test func theMediaUnitPassesVerifyAndIsHardened() async throws {
        let inputs = try PackageInputs("package-media")
        let tree = try await Self.packagedTree(inputs)
        let pkg = Self.pkg

        let listing = try await Subprocess.run("dpkg-deb", ["--contents", try await SharedPackage.defaultDeb()]).output
        let entries = PackageCommandTests.listing(listing)
        for path in ["./lib/systemd/system/\(pkg)-media@.service", "./lib/udev/rules.d/61-\(pkg)-media.rules"] {
            #expect(entries[path]?.mode == "-rw-r--r--" && entries[path]?.owner == "root/root", "\(path): \(listing)")
        }

        let unit = try String(contentsOfFile: tree + "/lib/systemd/system/\(pkg)-media@.service", encoding: .utf8)
        let serve = try String(contentsOfFile: tree + "/lib/systemd/system/\(pkg)-serve.service", encoding: .utf8)
        let media = Self.settings(unit)
        let served = Self.settings(serve)
        #expect(media["ExecStart"] == ["/usr/lib/\(pkg)/clientctl install --root /var/lib/\(pkg) --from /run/\(pkg)-media/%i --wait 600"])
        #expect(
            media["User"] == ["\(pkg)-serve"] && served["User"] == media["User"], "one dynamic user: \(media["User"] ?? []) \(served["User"] ?? [])")
        #expect(media["DynamicUser"] == ["yes"] && served["DynamicUser"] == ["yes"])
        #expect(media["StateDirectory"] == served["StateDirectory"] && media["StateDirectoryMode"] == served["StateDirectoryMode"])
        #expect(media["BindsTo"] == ["dev-%i.device"] && media["PrivateNetwork"] == ["yes"] && media["CapabilityBoundingSet"] == [""])
        // Only the mount, its check and the unmount run privileged (`+`); the install does not.
        let privileged = unit.split(separator: "\n").filter { $0.hasPrefix("Exec") && ($0.contains("=+") || $0.contains("=-+")) }
        #expect(privileged.allSatisfy { !$0.contains("/usr/lib/\(pkg)/") } && privileged.count == 6, "\(privileged)")

        // systemd's units and the programs the unit names, from this Debian, where a device has them.
        try FileManager.default.createDirectory(atPath: tree + "/usr/lib/systemd", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/usr/lib/systemd/system", toPath: tree + "/usr/lib/systemd/system")
        for program in Self.programs(unit) where !program.hasPrefix("/usr/lib/\(pkg)/") {
            try #require(FileManager.default.isExecutableFile(atPath: program), "\(program) is where Debian has it")
            try FileManager.default.createDirectory(atPath: tree + (program as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let file = URL(fileURLWithPath: program).resolvingSymlinksInPath().path  // /bin/sh is a link to dash
            try FileManager.default.copyItem(atPath: file, toPath: tree + program)
        }
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/findmnt"), "ExecCondition's sh runs it")
        let verify = try await Subprocess.run(
            "systemd-analyze", ["verify", "--man=no", "--root=\(tree)", "\(pkg)-media@sdb1.service", "\(pkg)-serve.service"])
        #expect(verify.status == 0 && verify.errorOutput.isEmpty, "\(verify.errorOutput)")
        // verify does judge the unit: a misspelt setting is reported.
        let misspelt = tree + "/lib/systemd/system/\(pkg)-media@.service"
        try Data(unit.replacingOccurrences(of: "PrivateNetwork=", with: "PrivateNetwrk=").utf8).write(to: URL(fileURLWithPath: misspelt))
        let caught = try await Subprocess.run("systemd-analyze", ["verify", "--man=no", "--root=\(tree)", "\(pkg)-media@sdb1.service"])
        #expect(caught.errorOutput.contains("Unknown key 'PrivateNetwrk'"), "\(caught.errorOutput)")
        try Data(unit.utf8).write(to: URL(fileURLWithPath: misspelt))

        // The exposure, read from its line (`→ Overall exposure level for UNIT: 0.3 SAFE 😀`),
        // and --threshold (the same level times ten) makes the tool itself fail above it.
        let threshold = String(Int(Self.exposureBound * 10))
        let security = try await Subprocess.run(
            "systemd-analyze", ["security", "--offline=yes", "--root=\(tree)", "--threshold=\(threshold)", "\(pkg)-media@sdb1.service"])
        let line = security.output.split(separator: "\n").first { $0.contains("Overall exposure level for \(pkg)-media@sdb1.service") } ?? ""
        let exposure = line.split(separator: ":").last.flatMap { Double($0.split(separator: " ").first ?? "") }
        #expect(exposure.map { $0 <= Self.exposureBound } == true, "exposure: \(line) \(security.errorOutput)")
        #expect(security.status == 0, "above --threshold=\(threshold): \(security.output.suffix(2000))")
        print("PackageMediaUnitTests: \(line.trimmingCharacters(in: .whitespaces))")
    }

    /// The rule, read strictly as udev(7) defines its syntax: one rule (continued with `\`),
    /// every part `KEY`, `KEY{ATTR}` then an operator then a double-quoted value, separated
    /// by commas; exactly the narrow matches, no program run by udev, the template it names
    /// shipped, and a file name that sorts after udev's `60-persistent-storage.rules`, whose
    /// builtins set the properties it matches.
    @Test func theUdevRuleIsNarrowAndStartsTheTemplate() async throws {
        let inputs = try PackageInputs("package-media-rule")
        let tree = try await Self.packagedTree(inputs)
        let pkg = Self.pkg
        let name = "61-\(pkg)-media.rules"
        let text = try String(contentsOfFile: tree + "/lib/udev/rules.d/" + name, encoding: .utf8)
        let rules = try Self.udevRules(text)
        try #require(rules.count == 1, "one rule: \(rules)")
        let rule = rules[0]
        let matches = rule.filter { $0.op == "==" || $0.op == "!=" }
        let expected: [UdevPart] = [
            .init(key: "ACTION", op: "==", value: "add"), .init(key: "SUBSYSTEM", op: "==", value: "block"),
            .init(key: "KERNEL", op: "==", value: "sd*"), .init(key: "ENV{ID_BUS}", op: "==", value: "usb"),
            .init(key: "ENV{ID_FS_USAGE}", op: "==", value: "filesystem"), .init(key: "ENV{ID_FS_TYPE}", op: "==", value: "vfat|exfat|ext4"),
        ]
        #expect(matches == expected, "exactly the narrow matches: \(matches)")
        let assignments = rule.filter { $0.op != "==" && $0.op != "!=" }
        #expect(
            assignments == [
                .init(key: "TAG", op: "+=", value: "systemd"), .init(key: "ENV{SYSTEMD_WANTS}", op: "+=", value: "\(pkg)-media@%k.service"),
            ],
            "\(assignments)")
        #expect(!rule.contains { part in ["RUN", "PROGRAM", "IMPORT"].contains(String(part.key.prefix { $0 != "{" })) }, "udev runs nothing itself")
        #expect(FileManager.default.fileExists(atPath: tree + "/lib/systemd/system/\(pkg)-media@.service"), "the template it wants is shipped")
        #expect(Array("60-persistent-storage.rules".utf8).lexicographicallyPrecedes(Array(name.utf8)), "after the rules that set ID_BUS and ID_FS_*")
        #expect(text.contains("ValveSoftware/SteamOS#2055") && text.contains("guysoft/OctoPi#582"), "the comments say why")
        // The parser refuses what udev would ignore: a quote left open, a missing comma.
        #expect(throws: UdevSyntaxError.self) { try Self.udevRules("ACTION==\"add\", ENV{ID_BUS}==\"usb\n") }
        #expect(throws: UdevSyntaxError.self) { try Self.udevRules("ACTION==\"add\" SUBSYSTEM==\"block\"\n") }
    }

    /// udev itself, from Debian's `udev` package (`udevadm test`, which evaluates every rule
    /// file for a device and prints the properties it ends with; it runs no RUN program and
    /// starts nothing), with the package's rule placed beside udev's own rules, in a `bwrap`
    /// sandbox of its own (read-only root, its own /dev, /run and /sys). Simulated devices:
    /// a sysfs tree of a USB stick (the attributes udev's `usb_id` reads) or of a SATA disk,
    /// over a loop device holding a real file system that udev's `blkid` probes, reached
    /// through a device node of the test's own. Wanted: the template for vfat, exfat and
    /// ext4 on USB (a whole stick or its partition); nothing for ext2, swap, a SATA disk, a
    /// change event, the same rule numbered 60 (before the properties exist), or any disk
    /// of this machine.
    @Test(.enabled(if: UdevHarness.available != nil, "needs root, bwrap, losetup, mkfs and udevadm (Debian's udev, or CLIENTCTL_TEST_UDEV_ROOT)"))
    func udevItselfStartsTheTemplateForAUSBFileSystemOnly() async throws {
        let inputs = try PackageInputs("package-media-udev")
        let tree = try await Self.packagedTree(inputs)
        let pkg = Self.pkg
        let harness = try UdevHarness(tmp: inputs.tmp, udevRoot: try #require(UdevHarness.available))
        let rule = tree + "/lib/udev/rules.d/61-\(pkg)-media.rules"
        let wants = "\(pkg)-media@%k.service"
        defer { harness.detachAll() }

        let cases: [(label: String, image: String, bus: UdevHarness.Bus, partition: Bool, action: String, ruleName: String, wanted: Bool)] = [
            ("vfat stick", "vfat", .usb, false, "add", "61", true),
            ("exfat stick", "exfat", .usb, false, "add", "61", true),
            ("ext4 stick", "ext4", .usb, false, "add", "61", true),
            ("vfat partition of a stick", "vfat", .usb, true, "add", "61", true),
            ("ext2 stick", "ext2", .usb, false, "add", "61", false),
            ("swap on a stick", "swap", .usb, false, "add", "61", false),
            ("vfat on a SATA disk", "vfat", .sata, false, "add", "61", false),
            ("vfat stick, change event", "vfat", .usb, false, "change", "61", false),
            ("vfat stick, the rule numbered 60", "vfat", .usb, false, "add", "60", false),
        ]
        for item in cases {
            let run = try await harness.test(
                image: item.image, bus: item.bus, partition: item.partition, action: item.action,
                rule: rule, ruleName: "\(item.ruleName)-\(pkg)-media.rules")
            let kernel = item.partition ? "sdb1" : "sdb"
            #expect(run.read, "\(item.label): udev read the rule: \(run.log.suffix(3000))")
            #expect(run.complaints.isEmpty, "\(item.label): udev complained about the rule: \(run.complaints)")
            let expected = item.wanted ? [wants.replacingOccurrences(of: "%k", with: kernel)] : []
            #expect(run.wants.filter { $0.contains("-media@") } == expected, "\(item.label): \(run.properties)")
            if item.bus == .usb { #expect(run.properties["ID_BUS"] == "usb", "\(item.label): usb_id ran: \(run.properties)") }
        }

        // This machine's own disks (not loop devices), from the real sysfs: never matched.
        let disks = try FileManager.default.contentsOfDirectory(atPath: "/sys/class/block").filter { !$0.hasPrefix("loop") }.sorted()
        #expect(!disks.isEmpty)
        for disk in disks {
            let run = try await harness.testHostDisk(disk, rule: rule, ruleName: "61-\(pkg)-media.rules")
            #expect(run.read && run.complaints.isEmpty, "\(disk): \(run.log.suffix(2000))")
            #expect(run.wants.filter { $0.contains("-media@") }.isEmpty, "\(disk): \(run.properties)")
        }
    }

    /// A package name that is no valid user name (a leading digit, a dot) still gives both
    /// units one user, of the package's own: systemd's derived name for serve would be a
    /// hash the media unit cannot spell.
    @Test func aPackageNameThatIsNoUserNameStillSharesOneUser() async throws {
        let inputs = try PackageInputs("package-media-user")
        let name = "2048.notes"
        let built = try await ReleaseBinaries.package(inputs.arguments(replacing: ["--package": name]))
        #expect(built.status == 0, "\(built.errorOutput)")
        let deb = inputs.tmp("dist/\(name)_1.0.0_\(PackageInputs.architecture).deb")
        let tree = inputs.tmp("tree")
        let extract = try await Subprocess.run("dpkg-deb", ["-x", deb, tree])
        #expect(extract.status == 0, "\(extract.errorOutput)")
        let media = Self.settings(try String(contentsOfFile: tree + "/lib/systemd/system/\(name)-media@.service", encoding: .utf8))
        let serve = Self.settings(try String(contentsOfFile: tree + "/lib/systemd/system/\(name)-serve.service", encoding: .utf8))
        let user = try #require(media["User"]?.first)
        #expect(serve["User"] == [user], "\(serve["User"] ?? [])")
        #expect(user.hasPrefix("_clientctl-") && user.count == 23 && user.dropFirst(11).allSatisfy(\.isHexDigit), "\(user)")
    }

    // MARK: - Helpers

    /// The default package (built once, shared) unpacked into `inputs`' `tmp/tree`.
    static func packagedTree(_ inputs: PackageInputs) async throws -> String {
        let tree = inputs.tmp("tree")
        let extract = try await Subprocess.run("dpkg-deb", ["-x", try await SharedPackage.defaultDeb(), tree])
        try #require(extract.status == 0, "\(extract.errorOutput)")
        return tree
    }

    /// A unit file's settings, by name, each with its values in order.
    static func settings(_ unit: String) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for line in unit.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            found[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        return found
    }

    /// The programs a unit's `Exec…=` lines run (their prefixes `-+!@:` taken off).
    static func programs(_ unit: String) -> [String] {
        var found: [String] = []
        for (key, values) in settings(unit) where key.hasPrefix("Exec") {
            for value in values {
                let command = value.drop { "-+!@:".contains($0) }
                if let program = command.split(separator: " ").first, !found.contains(String(program)) { found.append(String(program)) }
            }
        }
        return found.sorted()
    }

    /// One part of a udev rule: `KEY` or `KEY{ATTR}`, an operator, the unquoted value.
    struct UdevPart: Equatable, CustomStringConvertible {
        var key: String
        var op: String
        var value: String
        var description: String { "\(key)\(op)\"\(value)\"" }
    }

    struct UdevSyntaxError: Error, CustomStringConvertible {
        var line: String
        var why: String
        var description: String { "'\(line)': \(why)" }
    }

    /// The rules of a udev rules file, as udev(7) writes them: comment and empty lines
    /// skipped, a line ending in `\` continued on the next, each rule a comma-separated list
    /// of `KEY`, optional `{ATTR}`, operator (`==`, `!=`, `=`, `+=`, `-=`, `:=`) and a value
    /// in double quotes; anything else throws.
    static func udevRules(_ text: String) throws -> [[UdevPart]] {
        var logical: [String] = []
        var pending = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = pending + raw.trimmingCharacters(in: .whitespaces)
            if pending.isEmpty, line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasSuffix("\\") {
                pending = String(line.dropLast()) + " "
                continue
            }
            pending = ""
            logical.append(line)
        }
        guard pending.isEmpty else { throw UdevSyntaxError(line: pending, why: "continued past the end of the file") }
        return try logical.map(udevRule)
    }

    private static func udevRule(_ line: String) throws -> [UdevPart] {
        var parts: [UdevPart] = []
        var rest = Substring(line)
        let keyCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ_")
        while true {
            rest = rest.drop { $0 == " " }
            let key = rest.prefix { keyCharacters.contains($0) }
            guard !key.isEmpty else { throw UdevSyntaxError(line: line, why: "a key expected at '\(rest.prefix(20))'") }
            rest = rest.dropFirst(key.count)
            var fullKey = String(key)
            if rest.first == "{" {
                guard let close = rest.firstIndex(of: "}") else { throw UdevSyntaxError(line: line, why: "'{' not closed") }
                fullKey += rest[...close]
                rest = rest[rest.index(after: close)...]
            }
            guard let op = ["==", "!=", "+=", "-=", ":=", "="].first(where: { rest.hasPrefix($0) }) else {
                throw UdevSyntaxError(line: line, why: "an operator expected after \(fullKey)")
            }
            rest = rest.dropFirst(op.count)
            guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\"") else {
                throw UdevSyntaxError(line: line, why: "a double-quoted value expected after \(fullKey)\(op)")
            }
            parts.append(UdevPart(key: fullKey, op: op, value: String(rest[rest.index(after: rest.startIndex)..<end])))
            rest = rest[rest.index(after: end)...].drop { $0 == " " }
            if rest.isEmpty { return parts }
            guard rest.first == "," else { throw UdevSyntaxError(line: line, why: "',' expected after \(fullKey)") }
            rest = rest.dropFirst()
        }
    }
}

/// `udevadm test` in a `bwrap` sandbox on simulated block devices: a sysfs tree the test
/// writes (what the kernel shows for a USB stick or a SATA disk, as systemd's own udev tests
/// simulate devices; `SYSTEMD_DEVICE_VERIFY_SYSFS=0` lets udev read it) over a loop device
/// attached read-only to a file system image, with a device node of the test's own (udev
/// changes a node's mode; the host's nodes are never handed to it).
struct UdevHarness {
    enum Bus { case usb, sata }

    /// What one `udevadm test` printed.
    struct Run {
        var log: String
        /// The properties it ended with.
        var properties: [String: String]
        var wants: [String] { (properties["SYSTEMD_WANTS"] ?? "").split(separator: " ").map(String.init) }
        /// Whether the rule file was read, and each line of the log naming the file (udev
        /// names a rules file only to complain about one of its lines).
        var read: Bool
        var complaints: [String]
    }

    let tmp: TemporaryDirectory
    /// `/` for the system's udev, or a folder holding Debian's `udev` package unpacked.
    let udevRoot: String
    private let attached = AttachedLoops()

    init(tmp: TemporaryDirectory, udevRoot: String) throws {
        self.tmp = tmp
        self.udevRoot = udevRoot
    }

    /// Where udev is: `CLIENTCTL_TEST_UDEV_ROOT` (an unpacked `udev` package), else the
    /// system's; `nil` when it or another tool is missing, or this is not root (loop devices
    /// and device nodes need root; CI runs as root).
    static let available: String? = {
        let fm = FileManager.default
        guard getuid() == 0 else { return nil }
        let tools =
            ["bwrap", "mknod"].map { "/usr/bin/" + $0 }
            + ["losetup", "mkfs.vfat", "mkfs.exfat", "mkfs.ext4", "mkfs.ext2", "mkswap"].map { "/usr/sbin/" + $0 }
        guard tools.allSatisfy(fm.isExecutableFile(atPath:)) else { return nil }
        let root = ProcessInfo.processInfo.environment["CLIENTCTL_TEST_UDEV_ROOT"] ?? "/"
        return fm.isExecutableFile(atPath: udevadm(root)) && fm.fileExists(atPath: root + "/lib/udev/rules.d/60-persistent-storage.rules")
            ? root : nil
    }()

    static func udevadm(_ root: String) -> String {
        let bin = (root == "/" ? "" : root) + "/bin/udevadm"
        return FileManager.default.isExecutableFile(atPath: bin) ? bin : (root == "/" ? "" : root) + "/usr/bin/udevadm"
    }

    /// One `udevadm test --action=ACTION` of a simulated `sdb` (or its partition `sdb1`) on
    /// `bus`, holding a file system `image` (`vfat`, `exfat`, `ext4`, `ext2`, `swap`), with
    /// the package's `rule` installed as `ruleName` beside udev's own rules.
    func test(image: String, bus: Bus, partition: Bool, action: String, rule: String, ruleName: String) async throws -> Run {
        let label = "\(image)-\(bus)-\(partition)-\(action)-\(ruleName)"
        let fsNode = try await node(for: try await makeImage(image), name: label + ".fs")
        let sys = tmp("sys-" + label)
        var binds = ["--bind", sys, "/sys"]
        var script: String
        if partition {
            let disk = try await node(for: try await makeImage("blank"), name: label + ".disk")
            try writeSysfs(sys, bus: bus, disk: disk.number, partition: fsNode.number)
            binds += ["--dev-bind", disk.path, "/dev/sdb", "--dev-bind", fsNode.path, "/dev/sdb1"]
            // The partition reads its disk's properties from udev's database: the disk first.
            script = "\"$0\" test --action=add /sys/class/block/sdb >/dev/null 2>&1; exec \"$0\" test --action=\(action) /sys/class/block/sdb1"
        } else {
            try writeSysfs(sys, bus: bus, disk: fsNode.number, partition: nil)
            binds += ["--dev-bind", fsNode.path, "/dev/sdb"]
            script = "exec \"$0\" test --action=\(action) /sys/class/block/sdb"
        }
        return try await run(script: script, binds: binds, rule: rule, ruleName: ruleName)
    }

    /// `udevadm test --action=add` of one of this machine's block devices, read from the real
    /// sysfs, through a node of the test's own for its device number.
    func testHostDisk(_ name: String, rule: String, ruleName: String) async throws -> Run {
        let number = try String(contentsOfFile: "/sys/class/block/\(name)/dev", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let path = tmp("host-\(name).node")
        let parts = number.split(separator: ":").map(String.init)
        let made = try await Subprocess.run("/usr/bin/mknod", ["-m", "0600", path, "b", parts[0], parts[1]])
        try #require(made.status == 0, "\(made.errorOutput)")
        return try await run(
            script: "exec \"$0\" test --action=add /sys/class/block/\(name)",
            binds: ["--ro-bind", "/sys", "/sys", "--dev-bind", path, "/dev/\(name)"],
            rule: rule, ruleName: ruleName)
    }

    private func run(script: String, binds: [String], rule: String, ruleName: String) async throws -> Run {
        // udev's rules and the package's, in one folder, as on a device.
        let rules = tmp("rules-" + UUID().uuidString)
        try FileManager.default.copyItem(atPath: (udevRoot == "/" ? "" : udevRoot) + "/lib/udev/rules.d", toPath: rules)
        // Only udev's own: a package another test installs on this machine meanwhile
        // (AptInstallTests) puts its rules in the same folder.
        for name in try FileManager.default.contentsOfDirectory(atPath: rules) where name.contains("clientctl") {
            try FileManager.default.removeItem(atPath: rules + "/" + name)
        }
        try FileManager.default.copyItem(atPath: rule, toPath: rules + "/" + ruleName)
        var sandbox = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
        // The machine's own udev settings are hidden where it has them. A machine without udev
        // installed has no /etc/udev, and bwrap cannot make one on the read-only root: there is
        // nothing to hide then.
        if FileManager.default.fileExists(atPath: "/etc/udev") { sandbox += ["--tmpfs", "/etc/udev"] }
        if udevRoot != "/" { sandbox += ["--ro-bind", udevRoot + "/lib/udev", "/lib/udev"] }
        sandbox += ["--ro-bind", rules, "/lib/udev/rules.d"] + binds + ["--die-with-parent"]
        let result = try await Subprocess.run(
            "/usr/bin/bwrap", sandbox + ["/bin/sh", "-c", script, Self.udevadm(udevRoot)], environment: ["SYSTEMD_DEVICE_VERIFY_SYSFS": "0"],
            timeout: .seconds(120))
        let log = result.output + result.errorOutput
        var properties: [String: String] = [:]
        if let start = log.range(of: "some values may be different, or not available at a simulation run.") {
            for line in log[start.upperBound...].split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        let lines = log.split(separator: "\n").map(String.init)
        return Run(
            log: log, properties: properties, read: lines.contains { $0.hasPrefix("Reading rules file: ") && $0.hasSuffix("/" + ruleName) },
            complaints: lines.filter { $0.contains(ruleName + ":") })
    }

    /// A 64 MiB image holding `kind`.
    private func makeImage(_ kind: String) async throws -> String {
        let path = tmp("image-\(kind)-" + UUID().uuidString)
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 64 << 20)
        try handle.close()
        let make: [String]? =
            switch kind {
            case "vfat": ["/usr/sbin/mkfs.vfat", "-n", "STICK", path]
            case "exfat": ["/usr/sbin/mkfs.exfat", "-L", "STICK", path]
            case "ext4", "ext2": ["/usr/sbin/mkfs.\(kind)", "-q", "-F", path]
            case "swap": ["/usr/sbin/mkswap", path]
            default: nil
            }
        if let make {
            let made = try await Subprocess.run(make[0], Array(make.dropFirst()))
            try #require(made.status == 0, "\(make): \(made.errorOutput)")
        }
        return path
    }

    /// A loop device attached read-only to `image`, and a block node of the test's own for it.
    private func node(for image: String, name: String) async throws -> (path: String, number: String) {
        let attach = try await Subprocess.run("/usr/sbin/losetup", ["--find", "--show", "--read-only", image])
        try #require(attach.status == 0, "\(attach.errorOutput)")
        let loop = attach.output.trimmingCharacters(in: .whitespacesAndNewlines)
        attached.add(loop)
        let sysName = (loop as NSString).lastPathComponent
        let number = try String(contentsOfFile: "/sys/class/block/\(sysName)/dev", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = number.split(separator: ":").map(String.init)
        let path = tmp(name + ".node")
        let made = try await Subprocess.run("/usr/bin/mknod", ["-m", "0600", path, "b", parts[0], parts[1]])
        try #require(made.status == 0, "\(made.errorOutput)")
        return (path, number)
    }

    /// Detaches every loop device this harness attached.
    func detachAll() {
        for loop in attached.all { _ = try? Subprocess.run("/usr/sbin/losetup", ["--detach", loop]) }
    }

    /// The sysfs of `sdb` (device number `disk`) and, with `partition`, of `sdb1`: on USB, a
    /// mass-storage interface (class 8, SCSI, bulk-only) of a stick under an xHCI controller
    /// with the SCSI device behind it (what `usb_id` reads); on SATA, an ATA port's SCSI
    /// device of vendor ATA.
    private func writeSysfs(_ root: String, bus: Bus, disk: String, partition: String?) throws {
        var files: [String: String] = [:]
        var links: [String: String] = [:]
        let pci = "devices/pci0000:00/0000:00:14.0"
        files[pci + "/uevent"] = "PCI_SLOT_NAME=0000:00:14.0\n"
        links[pci + "/subsystem"] = "bus/pci"
        let scsi: String
        switch bus {
        case .usb:
            let device = pci + "/usb1/1-1"
            files[device + "/uevent"] = "DEVTYPE=usb_device\nBUSNUM=001\nDEVNUM=002\n"
            links[device + "/subsystem"] = "bus/usb"
            for (name, value) in [
                ("idVendor", "0781"), ("idProduct", "5583"), ("bcdDevice", "0100"), ("manufacturer", "SanDisk"), ("product", "Ultra Fit"),
                ("serial", "4C530001"),
            ] {
                files[device + "/" + name] = value + "\n"
            }
            let interface = device + "/1-1:1.0"
            files[interface + "/uevent"] = "DEVTYPE=usb_interface\nINTERFACE=8/6/80\n"
            links[interface + "/subsystem"] = "bus/usb"
            for (name, value) in [("bInterfaceClass", "08"), ("bInterfaceSubClass", "06"), ("bInterfaceProtocol", "50"), ("bInterfaceNumber", "00")] {
                files[interface + "/" + name] = value + "\n"
            }
            scsi = interface + "/host6"
        case .sata:
            scsi = pci + "/ata1/host6"
        }
        files[scsi + "/uevent"] = "DEVTYPE=scsi_host\n"
        links[scsi + "/subsystem"] = "bus/scsi"
        let target = scsi + "/target6:0:0"
        files[target + "/uevent"] = "DEVTYPE=scsi_target\n"
        links[target + "/subsystem"] = "bus/scsi"
        let lun = target + "/6:0:0:0"
        files[lun + "/uevent"] = "DEVTYPE=scsi_device\n"
        links[lun + "/subsystem"] = "bus/scsi"
        let vendor = bus == .usb ? "SanDisk" : "ATA"
        for (name, value) in [("vendor", vendor), ("model", "Ultra Fit"), ("rev", "1.00"), ("type", "0")] { files[lun + "/" + name] = value + "\n" }
        let block = lun + "/block/sdb"
        let (diskMajor, diskMinor) = Self.split(disk)
        files[block + "/uevent"] = "MAJOR=\(diskMajor)\nMINOR=\(diskMinor)\nDEVNAME=sdb\nDEVTYPE=disk\n"
        files[block + "/dev"] = disk + "\n"
        files[block + "/removable"] = (bus == .usb ? "1" : "0") + "\n"
        files[block + "/size"] = "131072\n"
        files[block + "/ro"] = "0\n"
        links[block + "/subsystem"] = "class/block"
        links["class/block/sdb"] = block
        if let partition {
            let part = block + "/sdb1"
            let (major, minor) = Self.split(partition)
            files[part + "/uevent"] = "MAJOR=\(major)\nMINOR=\(minor)\nDEVNAME=sdb1\nDEVTYPE=partition\nPARTN=1\n"
            files[part + "/dev"] = partition + "\n"
            files[part + "/partition"] = "1\n"
            files[part + "/start"] = "2048\n"
            files[part + "/size"] = "129024\n"
            links[part + "/subsystem"] = "class/block"
            links["class/block/sdb1"] = part
        }
        for folder in ["class/block", "bus/usb", "bus/scsi", "bus/pci"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for (path, text) in files {
            try FileManager.default.createDirectory(
                atPath: root + "/" + (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/" + path))
        }
        for (path, target) in links {
            // Relative, as the kernel's: from the link's folder up to the sysfs root.
            let depth = path.split(separator: "/").count - 1
            let relative = String(repeating: "../", count: depth) + target
            try FileManager.default.createSymbolicLink(atPath: root + "/" + path, withDestinationPath: relative)
        }
    }

    private static func split(_ number: String) -> (String, String) {
        let parts = number.split(separator: ":").map(String.init)
        return (parts[0], parts.count > 1 ? parts[1] : "0")
    }
}

/// The loop devices a harness attached, detached at the end of its test.
private final class AttachedLoops: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var loops: [String] = []

    func add(_ loop: String) { lock.withLock { loops.append(loop) } }
    var all: [String] { lock.withLock { loops } }
}
