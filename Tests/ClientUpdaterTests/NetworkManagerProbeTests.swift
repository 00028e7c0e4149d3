import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// The metered-link probe (docs/download-policy.md#metered-links): NetworkManager's own
/// `Metered` property read from a real NetworkManager in a network namespace of the test's,
/// on a system bus of the test's; the settings override read from a route file of the test's.
@Suite struct NetworkManagerProbeTests {
    /// A real NetworkManager: no connection reads `Metered=unknown`, a connection made
    /// metered (`connection.metered yes`) reads metered, then `no` reads not metered.
    @Test func aRealNetworkManagerSaysWhetherTheLinkIsMetered() async throws {
        let rig = try await NetworkManagerRig()
        var probe = NetworkManagerProbe(meteredInterfaces: [])
        probe.busAddress = rig.busAddress

        try await rig.waitForDevice("v0", state: "disconnected")
        let before = await probe.read()
        #expect(before == LinkReading(metered: false, source: "NetworkManager: Metered=unknown; not metered"))

        try await rig.nmcli([
            "connection", "add", "type", "ethernet", "ifname", "v0", "con-name", "uplink", "ipv4.method", "manual",
            "ipv4.addresses", "10.77.0.2/24", "ipv4.gateway", "10.77.0.1", "ipv6.method", "disabled", "connection.metered", "yes",
        ])
        try await rig.nmcli(["connection", "up", "uplink"])
        try await Poll.until("NetworkManager's Metered to be yes") { await probe.read().metered }
        #expect(await probe.read() == LinkReading(metered: true, source: "NetworkManager: Metered=yes"))

        try await rig.nmcli(["connection", "modify", "uplink", "connection.metered", "no"])
        try await Poll.until("NetworkManager's Metered to be no") { await !probe.read().metered }
        #expect(await probe.read() == LinkReading(metered: false, source: "NetworkManager: Metered=no"))

        // The override does not outvote NetworkManager's own answer.
        probe.meteredInterfaces = ["v0"]
        #expect(await probe.read() == LinkReading(metered: false, source: "NetworkManager: Metered=no"))
    }

    /// A system bus without NetworkManager on it: the settings name the default route's
    /// interface metered, so the link is metered, and the source says why.
    @Test func aBusWithoutNetworkManagerFallsBackToTheSettings() async throws {
        let dir = try TemporaryDirectory("nm-probe")
        let bus = try await PrivateSystemBus(in: dir)
        defer { bus.stop() }
        var probe = NetworkManagerProbe(meteredInterfaces: ["wwan0"])
        probe.busAddress = bus.address
        probe.routeFile = try Self.routes(
            in: dir, [Route(interface: "eth0", destination: "0000A8C0", mask: "00FFFFFF", metric: 100), Route(interface: "wwan0", metric: 700)])
        #expect(await probe.read() == LinkReading(metered: true, source: "settings: 'wwan0' is named metered (NetworkManager: not running)"))
        probe.meteredInterfaces = ["wlan0"]
        #expect(
            await probe.read() == LinkReading(metered: false, source: "settings: 'wwan0' is not named metered (NetworkManager: not running)"))
        probe.meteredInterfaces = []
        #expect(await probe.read() == LinkReading(metered: false, source: "NetworkManager: not running; not metered"))
    }

    /// No system bus at all (a machine without D-Bus): the override reads the route file;
    /// of two default routes the lowest metric's interface is the one in use.
    @Test func noBusReadsTheDefaultRouteOfTheLowestMetric() async throws {
        let dir = try TemporaryDirectory("nm-probe")
        var probe = NetworkManagerProbe(meteredInterfaces: ["wwan0"])
        probe.busAddress = "unix:path=" + dir("no-bus")
        probe.routeFile = try Self.routes(in: dir, [Route(interface: "wwan0", metric: 700), Route(interface: "eth0", metric: 100)])
        #expect(await probe.read() == LinkReading(metered: false, source: "settings: 'eth0' is not named metered (NetworkManager: no system bus)"))

        probe.routeFile = try Self.routes(in: dir, [Route(interface: "wwan0", metric: 50), Route(interface: "eth0", metric: 100)])
        #expect(await probe.read() == LinkReading(metered: true, source: "settings: 'wwan0' is named metered (NetworkManager: no system bus)"))

        // A route to a network is not a default route; a route that is down does not count.
        probe.routeFile = try Self.routes(
            in: dir, [Route(interface: "wwan0", destination: "0000A8C0", mask: "00FFFFFF"), Route(interface: "wwan0", flags: "0002")])
        #expect(await probe.read() == LinkReading(metered: false, source: "NetworkManager: no system bus; no default route: not metered"))

        probe.routeFile = dir("absent")
        #expect(await probe.read() == LinkReading(metered: false, source: "NetworkManager: no system bus; \(dir("absent")) unreadable: not metered"))
    }

    /// A NetworkManager that never answers: the probe answers with the override once its
    /// bound has passed (a `dbus-send` that hangs stands for it).
    @Test func aProbeThatHangsAnswersWithinItsBound() async throws {
        let dir = try TemporaryDirectory("nm-probe")
        let hanging = dir("dbus-send")
        try "#!/bin/sh\nexec sleep 600\n".write(toFile: hanging, atomically: true, encoding: .utf8)
        chmod(hanging, 0o755)
        var probe = NetworkManagerProbe(meteredInterfaces: ["wwan0"])
        probe.dbusSend = hanging
        probe.timeout = .milliseconds(200)
        probe.routeFile = try Self.routes(in: dir, [Route(interface: "wwan0")])
        #expect(
            await probe.read() == LinkReading(metered: true, source: "settings: 'wwan0' is named metered (NetworkManager: no answer within 200 ms)"))

        probe.dbusSend = dir("missing-dbus-send")
        #expect(
            await probe.read()
                == LinkReading(
                    metered: true, source: "settings: 'wwan0' is named metered (NetworkManager: \(dir("missing-dbus-send")) is not installed)"))
    }

    /// A line of a `/proc/net/route` of the test's.
    struct Route {
        var interface: String
        var destination = "00000000"
        var mask = "00000000"
        var metric = 0
        /// RTF_UP | RTF_GATEWAY.
        var flags = "0003"
    }

    /// A `/proc/net/route` of the test's holding `rows`.
    static func routes(in dir: TemporaryDirectory, _ rows: [Route]) throws -> String {
        var text = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        for row in rows {
            text += "\(row.interface)\t\(row.destination)\t0100A8C0\t\(row.flags)\t0\t0\t\(row.metric)\t\(row.mask)\t0\t0\t0\n"
        }
        let path = dir("route-\(UUID().uuidString)")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// A `dbus-daemon` of the test's own: its config and socket in a temp dir, allowing
/// everything (it is the system bus only of the processes the test points at it).
final class PrivateSystemBus: Sendable {
    let address: String
    private let daemon: ChildProcess.Running

    init(in dir: TemporaryDirectory) async throws {
        let socket = dir("bus.sock")
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: dir("bus.conf"), atomically: true, encoding: .utf8)
        address = "unix:path=" + socket
        daemon = try ChildProcess(
            "dbus-daemon", ["--nofork", "--config-file=" + dir("bus.conf")], standardOutput: .file(dir("bus.out")),
            standardError: .file(dir("bus.err"))
        ).start()
        let daemon = daemon
        try await Poll.until("dbus-daemon's socket") {
            guard daemon.isRunning else {
                throw HarnessError("dbus-daemon ended: \((try? String(contentsOfFile: dir("bus.err"), encoding: .utf8)) ?? "")")
            }
            return FileManager.default.fileExists(atPath: socket)
        }
    }

    func stop() { daemon.end() }

    deinit { daemon.end() }
}

/// A real NetworkManager in a network namespace of the test's (a veth pair in it), on a
/// ``PrivateSystemBus``, with its config, connections and state in a temp dir. It runs in a
/// mount namespace of its own where `/sys` is read-only (so it takes the devices without
/// waiting for udev, as in a container) and `/run` and `/var/lib` are empty tmpfs (nothing
/// of the machine's is read or written). The namespace is deleted and every process killed
/// when the rig goes, a failed test included.
final class NetworkManagerRig: Sendable {
    let dir: TemporaryDirectory
    let bus: PrivateSystemBus
    let namespace: String
    private let daemon: ChildProcess.Running
    var busAddress: String { bus.address }

    init() async throws {
        let dir = try TemporaryDirectory("nm-rig")
        self.dir = dir
        let namespace = "clientctl-nm-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        self.namespace = namespace
        bus = try await PrivateSystemBus(in: dir)
        try FileManager.default.createDirectory(atPath: dir("connections"), withIntermediateDirectories: true)
        try """
        [main]
        plugins=keyfile
        dns=none
        rc-manager=unmanaged
        no-auto-default=*
        auth-polkit=false
        [keyfile]
        path=\(dir("connections"))
        [connectivity]
        enabled=false
        """.write(toFile: dir("nm.conf"), atomically: true, encoding: .utf8)
        try """
        set -e
        mount -o remount,bind,ro /sys
        mount -t tmpfs tmpfs /run
        mount -t tmpfs tmpfs /var/lib
        exec NetworkManager --debug --log-level=INFO --config=\(dir("nm.conf")) --config-dir=\(dir("none")) \
          --system-config-dir=\(dir("none")) --intern-config=\(dir("intern.conf")) --state-file=\(dir("nm.state")) \
          --pid-file=\(dir("nm.pid"))
        """.write(toFile: dir("start-nm.sh"), atomically: true, encoding: .utf8)
        try await Self.run("ip", ["netns", "add", namespace])
        var started: ChildProcess.Running?
        do {
            try await Self.run("ip", ["netns", "exec", namespace, "ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
            try await Self.run("ip", ["netns", "exec", namespace, "ip", "link", "set", "v1", "up"])
            started = try ChildProcess(
                "ip", ["netns", "exec", namespace, "unshare", "--mount", "--propagation", "private", "sh", dir("start-nm.sh")],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], standardOutput: .file(dir("nm.log")),
                standardError: .file(dir("nm.err"))
            ).start()
        } catch {
            _ = try? ChildProcess("ip", ["netns", "delete", namespace], timeout: .seconds(30)).runBlocking()
            throw error
        }
        guard let started else { throw HarnessError("NetworkManager did not start") }
        daemon = started
        try await Poll.until("NetworkManager on the test's bus") {
            guard started.isRunning else { throw HarnessError("NetworkManager ended: \(Self.tail(dir("nm.err")))") }
            return (try? await self.nmcli(["-t", "-f", "RUNNING", "general"]))?.contains("running") ?? false
        }
    }

    /// Runs `nmcli` against the rig's NetworkManager; throws with its error output when it fails.
    @discardableResult
    func nmcli(_ arguments: [String]) async throws -> String {
        let ran = try await Subprocess.run(
            "nmcli", arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], gate: nil, timeout: .seconds(60))
        guard ran.status == 0 else { throw HarnessError("nmcli \(arguments.joined(separator: " ")): \(ran.errorOutput)") }
        return ran.output
    }

    /// Waits until NetworkManager manages `device` in `state` (`disconnected`: managed, idle).
    func waitForDevice(_ device: String, state: String) async throws {
        try await Poll.until("\(device) \(state) in NetworkManager") {
            try await self.nmcli(["-t", "-f", "DEVICE,STATE", "device"]).split(separator: "\n").contains("\(device):\(state)")
        }
    }

    private static func run(_ tool: String, _ arguments: [String]) async throws {
        let ran = try await Subprocess.run(tool, arguments, gate: nil, timeout: .seconds(60))
        guard ran.status == 0 else { throw HarnessError("\(tool) \(arguments.joined(separator: " ")): \(ran.errorOutput)") }
    }

    private static func tail(_ path: String) -> String {
        String(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").suffix(2000))
    }

    deinit {
        daemon.end()
        _ = try? ChildProcess("ip", ["netns", "delete", namespace], timeout: .seconds(30)).runBlocking()
        bus.stop()
    }
}

extension ChildProcess.Running {
    /// SIGTERM to its group, SIGKILL 10 s later if it still runs, then reaped.
    fileprivate func end() {
        guard isRunning else { return }
        signal(SIGTERM)
        try? Poll.untilBlocking("the bus to end", timeout: 10, every: .milliseconds(20)) { !isRunning }
        if isRunning { signal(SIGKILL) }
        _ = waitBlocking()
    }
}
