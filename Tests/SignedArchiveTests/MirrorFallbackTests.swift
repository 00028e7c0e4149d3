import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import FleetReports
import Foundation
import SignedArchive
import StrictJSON
import TestSupport
import Testing

/// A device behind a site mirror (docs/site-mirror.md#devices): the mirror is a copy of the
/// origin's published folder under `/site/`, served by a second loopback server; whatever
/// it does wrong changes only where the bytes come from, never what is installed.
@Suite struct MirrorFallbackTests {
    /// The origin (the fixture's server), a mirror folder copied from it, and the device
    /// set up with the mirror (and a report URL, so the journal records its reports).
    final class Site: @unchecked Sendable {
        // @unchecked: owned by one test at a time.
        let f: DeviceFixture
        let faults = LoopbackFaults()
        let mirror: LoopbackHTTPServer
        var mirrorFolder: String { f.tmp("mirror") }

        init(mirrorIdleSeconds: Double? = nil) throws {
            f = try DeviceFixture()
            try FileManager.default.createDirectory(atPath: f.tmp("mirror"), withIntermediateDirectories: true)
            mirror = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(f.tmp("mirror"))))
            var settings = try f.config.settings(ArchiveSettings.self, layout: f.layout)
            settings.mirrors = [mirror.url("/site/stable/manifest.json").absoluteString]
            settings.mirrorIdleTimeoutSeconds = mirrorIdleSeconds
            f.config = try DeviceConfig(
                app: f.config.app, channelKind: .signedArchive, settings: settings, shellVersion: f.config.shellVersion,
                deviceSettings: DeviceSettings(startupTimeoutSeconds: 120, reportURL: "http://127.0.0.1:9/"))
            try RootInitializer.writeUnlessLocked(f.config, to: f.layout, force: true, store: f.layout.clients)
        }

        deinit { mirror.stop() }

        /// Makes the mirror folder a copy of what the origin publishes now.
        func sync() throws {
            let target = mirrorFolder + "/site"
            if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
            try FileManager.default.copyItem(atPath: f.tmp("releases"), toPath: target)
        }

        /// Body bytes each server sent for `name` (a file of the channel's folder).
        func originBytes(_ name: String) async throws -> Int64 {
            try await f.server.settledLog().filter { $0.request.path == "/stable/\(name)" }.reduce(0) { $0 + $1.bodyBytesSent }
        }
        func mirrorBytes(_ name: String) async throws -> Int64 {
            try await mirror.settledLog().filter { $0.request.path == "/site/stable/\(name)" }.reduce(0) { $0 + $1.bodyBytesSent }
        }

        func archiveSize(_ version: String) throws -> Int64 {
            let attributes = try FileManager.default.attributesOfItem(atPath: f.tmp("releases/stable/v\(version).tar.gz"))
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        }

        /// The `downloaded` reports the device's journal holds.
        func downloadedReports() -> [FleetReport] { ReportJournal(layout: f.layout).recent().filter { $0.type == .downloaded } }

        func installed(_ version: String) throws -> Bool {
            let index = try String(contentsOfFile: f.layout.clientDirectory(Version(version) ?? Version(0, 0, 0)) + "/index.html", encoding: .utf8)
            return index.contains("<p id=\"version\">\(version)</p>")
        }
    }

    @Test func theArchiveComesFromTheMirrorAndTheManifestFromTheOrigin() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        #expect(site.f.requests(to: "/stable/v1.0.0.tar.gz").isEmpty, "the origin served no archive byte")
        #expect(try await site.mirror.settledLog().contains { $0.request.path == "/site/stable/v1.0.0.tar.gz" && $0.status == 200 })
        #expect(site.f.requests(to: "/stable/manifest.json").count == 1, "freshness from the origin while it answers")
        #expect(site.mirror.requests.allSatisfy { $0.path != "/site/stable/manifest.json" })
        let downloaded = site.downloadedReports()
        #expect(downloaded.count == 1)
        #expect(downloaded.first?.mirrorBytes == (try site.archiveSize("1.0.0")), "\(downloaded)")
        #expect(downloaded.first?.bytes == (try site.archiveSize("1.0.0")))
    }

    @Test func aMirrorThatLiesIsLeftForTheOriginInTheSameCheck() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        // Same length, other bytes: only the signed digest tells.
        let lying = site.mirrorFolder + "/site/stable/v1.0.0.tar.gz"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: lying))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: lying))
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        #expect(try await site.mirrorBytes("v1.0.0.tar.gz") == Int64(bytes.count), "the mirror was asked first")
        #expect(try await site.originBytes("v1.0.0.tar.gz") == Int64(bytes.count), "then the whole archive from the origin, from byte 0")
        #expect(site.f.requests(to: "/stable/v1.0.0.tar.gz").allSatisfy { $0.headers["range"] == nil }, "nothing resumed from the lie")
        #expect(site.downloadedReports().first?.mirrorBytes == 0, "the lie's bytes are not counted")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: site.f.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test func aMirrorThatLagsHidesNoNewerRelease() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()  // the mirror stays at 1.0.0
        try site.f.publish("1.1.0")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.1.0", "\(report)")
        #expect(try site.installed("1.1.0"))
        #expect(site.mirror.requests.contains { $0.path == "/site/stable/v1.1.0.tar.gz" }, "asked first, 404")
        #expect(try await site.originBytes("v1.1.0.tar.gz") == (try site.archiveSize("1.1.0")))
        #expect(site.downloadedReports().first?.mirrorBytes == 0)
    }

    @Test(arguments: [404, 500, 503])
    func aMirrorThatAnswersAnErrorIsSkippedForTheCheck(status: Int) async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        site.faults.add(.status(status), path: "/site/stable/v1.0.0.tar.gz")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(site.mirror.requests.filter { $0.path == "/site/stable/v1.0.0.tar.gz" }.count == 1, "asked once, not retried")
        #expect(try await site.originBytes("v1.0.0.tar.gz") == (try site.archiveSize("1.0.0")))
    }

    /// A mirror that answers what the request did not ask for (a 304 to a request without a
    /// condition, a 206 or 416 to one without Range, a 204) failed every check before: the
    /// downloader took the answer as final and the origin was never asked. Such a mirror is
    /// skipped like one that answers a 5xx, and the archive comes from the origin.
    @Test(arguments: [304, 416, 206, 204])
    func aMirrorAnswerTheRequestDidNotAskForIsSkipped(status: Int) async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        site.faults.add(.status(status), path: "/site/stable/v1.0.0.tar.gz")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        #expect(site.mirror.requests.filter { $0.path == "/site/stable/v1.0.0.tar.gz" }.count == 1, "asked once, then skipped")
        #expect(try await site.originBytes("v1.0.0.tar.gz") == (try site.archiveSize("1.0.0")))
        #expect(site.downloadedReports().first?.mirrorBytes == 0)
    }

    /// A mirror that trickles (a byte at a time, each within its idle timeout) held a check
    /// without end before: it is left once it falls behind its floor rate, after its idle
    /// timeout, and the rest of the archive comes from the origin with Range.
    @Test func aTricklingMirrorIsLeftForTheOrigin() async throws {
        let site = try Site(mirrorIdleSeconds: 0.5)
        try site.f.publish("1.0.0")
        try site.sync()
        site.faults.add(.drip(bytes: 1, every: 0.1), path: "/site/stable/v1.0.0.tar.gz")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        let fromOrigin = site.f.requests(to: "/stable/v1.0.0.tar.gz")
        #expect(fromOrigin.count == 1, "\(fromOrigin)")
        #expect(fromOrigin.first?.headers["range"]?.hasPrefix("bytes=") == true, "the rest, resumed: \(fromOrigin)")
        #expect(site.mirror.requests.filter { $0.path == "/site/stable/v1.0.0.tar.gz" }.count == 1, "the slow mirror is not asked again")
        let fromMirror = try #require(site.downloadedReports().first?.mirrorBytes)
        #expect(fromMirror > 0 && fromMirror < 100, "a few bytes came from the trickle, and verified: \(fromMirror)")
    }

    /// Bytes a mirror sent that turn out wrong only after a resume from the origin (the whole
    /// file's digest does not match) are not counted as the mirror's: `mirrorBytes` counts
    /// bytes that verified, and that mirror is not asked again in the check.
    @Test func aMirrorsBadBytesFoundAfterAResumeAreNotCounted() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        let path = site.mirrorFolder + "/site/stable/v1.0.0.tar.gz"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for k in 0..<216 { bytes[k] ^= 0x5A }
        try bytes.write(to: URL(fileURLWithPath: path))
        site.faults.add(.reset(afterBytes: 216), path: "/site/stable/v1.0.0.tar.gz")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        #expect(site.downloadedReports().first?.mirrorBytes == 0, "\(site.downloadedReports())")
        #expect(site.mirror.requests.filter { $0.path == "/site/stable/v1.0.0.tar.gz" }.count == 1)
    }

    @Test func aMissingFileIsTakenFromTheOrigin() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        try FileManager.default.removeItem(atPath: site.mirrorFolder + "/site/stable/v1.0.0.tar.gz")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try await site.originBytes("v1.0.0.tar.gz") == (try site.archiveSize("1.0.0")))
    }

    /// A mirror that lacks one file (a 404: it lags, or keeps no such file) is passed over for
    /// that file alone: the next file of the same check still comes from it.
    @Test func aMirrorThatLacksOneFileStillServesTheOthers() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        try FileManager.default.removeItem(atPath: site.mirrorFolder + "/site/stable/index.json")
        let notes = Observed<[String]>([])
        let transport = MirrorTransport(
            inner: DefaultTransport(settings: HTTPTransportSettings()), origin: site.f.server.url("/stable/manifest.json"),
            mirrors: [site.mirror.url("/site/stable/manifest.json")], idleTimeout: .seconds(5), prefersOrigin: ArchiveChannel.prefersOrigin,
            note: { line in notes.update { $0.append(line) } })
        let index = try await transport.get(TransportRequest(url: site.f.server.url("/stable/index.json"))) { _ in }
        let archive = try await transport.get(TransportRequest(url: site.f.server.url("/stable/v1.0.0.tar.gz"))) { _ in }
        #expect(index.status == 200 && archive.status == 200)
        #expect(transport.skipped.isEmpty, "\(notes.value)")
        #expect(transport.mirrorBytes == (try site.archiveSize("1.0.0")), "the archive came from the mirror")
        #expect(site.f.requests(to: "/stable/index.json").count == 1 && site.f.requests(to: "/stable/v1.0.0.tar.gz").isEmpty)
        #expect(notes.value.contains { $0.contains("index.json: HTTP 404; taken from the next source") }, "\(notes.value)")
    }

    /// A mirror that goes silent (before its body, or in the middle of it) is given up after
    /// the mirror's idle timeout, and the check ends from the origin.
    @Test(arguments: [0, 1])
    func aStalledMirrorIsLeftForTheOrigin(half: Int) async throws {
        let site = try Site(mirrorIdleSeconds: 0.5)
        try site.f.publish("1.0.0")
        try site.sync()
        let size = try site.archiveSize("1.0.0")
        site.faults.add(.stall(afterBytes: Int64(half) * size / 2), path: "/site/stable/v1.0.0.tar.gz")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        let fromOrigin = site.f.requests(to: "/stable/v1.0.0.tar.gz")
        #expect(fromOrigin.count == 1)
        if half == 1 {
            #expect(fromOrigin.first?.headers["range"] == "bytes=\(size / 2)-", "the rest resumed from the origin")
        }
        #expect(site.mirror.requests.filter { $0.path == "/site/stable/v1.0.0.tar.gz" }.count == 1, "the stalled mirror is not asked again")
    }

    /// A mirror whose connection dies mid-body (reset, or closed short): the rest comes from
    /// the origin, and what is installed verified against the signed digest.
    @Test(arguments: [true, false])
    func aMirrorThatDiesMidBodyIsLeftForTheOrigin(reset: Bool) async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        let size = try site.archiveSize("1.0.0")
        site.faults.add(reset ? .reset(afterBytes: size / 3) : .truncate(afterBytes: size / 3), path: "/site/stable/v1.0.0.tar.gz")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        #expect(try await site.originBytes("v1.0.0.tar.gz") > 0)
    }

    @Test func theOriginDownTheMirrorServesTheManifestAndTheArchive() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        site.f.server.stop()
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(try site.installed("1.0.0"))
        #expect(site.mirror.requests.contains { $0.path == "/site/stable/manifest.json" })
        let status = try await site.f.updater().status()
        #expect(status.highestAccepted == "1.0.0")
    }

    /// Found by the simulator (docs/simulation.md): the origin answers its first manifest
    /// request 503, so the mirrors are asked for it in the same attempt, and the mirror
    /// answers what is no manifest (a 404: it does not keep the channel; a 204). That answer
    /// ended the check ("HTTP 404", "empty document") where the origin's 503 alone would have
    /// been retried. Now the origin's failure is what the downloader sees, and its retry
    /// reaches the origin.
    @Test(arguments: [404, 204])
    func anOriginsPassingFailureIsRetriedWhateverTheMirrorSaysOfTheManifest(status: Int) async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        site.f.faults.first(1, .status(503), path: "/stable/manifest.json")
        site.faults.add(.status(status), path: "/site/stable/manifest.json")
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(site.f.requests(to: "/stable/manifest.json").count == 2, "the origin, asked again")
    }

    /// With the origin down, a mirror whose manifest is older than the one the device accepted
    /// (the release re-signed since the mirror's timer last ran: a replay) fails the check
    /// saying so (exit 69), as docs/site-mirror.md says, where it ended "stale" with exit 0.
    @Test func theOriginDownALaggingMirrorsReplayFailsTheCheck() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()  // the mirror keeps this manifest of 1.0.0
        try site.f.publish("1.0.0") { $0["published"] = .string(RFC3339.format(Date().addingTimeInterval(60))) }
        let first = try await site.f.updater().install()
        #expect(first.version == "1.0.0", "\(first)")
        site.f.server.stop()
        let error = await #expect(throws: SignedArchiveError.self) { try await site.f.updater().install() }
        #expect(error?.code == .originUnreachable, "\(String(describing: error))")
        #expect(error?.message.contains("the origin was not reached and the site mirror's manifest cannot stand in") == true)
        #expect(error?.kind.exitStatus == 69)
    }

    /// Found by the simulator (docs/simulation.md, seed 201 of 10 devices for 7 days): the
    /// origin answered one manifest request 503 and the mirror, lagging, stood in with a
    /// manifest older than the one the device accepted. The check failed ("cannot stand in")
    /// where the same device without the mirror retried the origin and installed the new
    /// release: the mirror changed the outcome, not only the speed. Now the origin is asked
    /// again, with the downloader's retries, and its release is installed in the same check.
    /// The mirror's manifest is an older release (below the device's floor) or the same
    /// release signed earlier (before the newest manifest it accepted).
    @Test(arguments: [true, false])
    func anOriginsPassingFailureIsRetriedWhenALaggingMirrorCannotStandIn(olderRelease: Bool) async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()  // the mirror keeps this manifest of 1.0.0 from now on
        if olderRelease {
            try site.f.publish("1.1.0")
        } else {
            try site.f.publish("1.0.0") { $0["published"] = .string(RFC3339.format(Date().addingTimeInterval(60))) }
        }
        let first = try await site.f.updater().install()
        #expect(first.version == (olderRelease ? "1.1.0" : "1.0.0"), "\(first)")
        try site.f.publish("1.2.0") { $0["published"] = .string(RFC3339.format(Date().addingTimeInterval(120))) }
        let before = site.f.requests(to: "/stable/manifest.json").count
        site.f.faults.add(.status(503), path: "/stable/manifest.json", requests: (before + 1)...(before + 1))
        let report = try await site.f.updater().install()
        #expect(report.result == .installed && report.version == "1.2.0", "\(report)")
        #expect(site.mirror.requests.contains { $0.path == "/site/stable/manifest.json" }, "the mirror stood in first")
        #expect(site.f.requests(to: "/stable/manifest.json").count == before + 2, "the origin, asked again")
        #expect(try await site.f.updater().status().highestAccepted == "1.2.0")
    }

    @Test func theOriginDownAMirrorWithAnAlteredManifestInstallsNothing() async throws {
        let site = try Site()
        try site.f.publish("1.0.0")
        try site.sync()
        let manifest = site.mirrorFolder + "/site/stable/manifest.json"
        let text = try String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(of: "1.0.0", with: "9.0.0")
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        site.f.server.stop()
        await #expect(throws: (any Error).self) { try await site.f.updater().install() }
        #expect(try site.f.snapshot().entries.keys.filter { $0.hasPrefix("clients/v") }.isEmpty)
        #expect(site.mirror.requests.allSatisfy { !$0.path.hasSuffix(".tar.gz") }, "nothing fetched on an unverified manifest")
    }
}

/// The mirror's address of each origin file, and the settings' rules.
@Suite struct MirrorAddressTests {
    @Test func theOriginsPathUnderTheMirrorsBase() throws {
        let origin = try #require(URL(string: "https://cdn.example.com/notes/stable/manifest.json"))
        let transport = MirrorTransport(
            inner: DefaultTransport(settings: HTTPTransportSettings()), origin: origin,
            mirrors: [
                try #require(URL(string: "http://mirror.shop.lan/cdn/notes/stable/manifest.json")),
                try #require(URL(string: "http://10.0.0.2:8080/stable/manifest.json")),
            ], prefersOrigin: { _ in false })
        let archive = try #require(URL(string: "https://cdn.example.com/notes/stable/v1.2.0.tar.gz"))
        #expect(transport.mirrorURL(of: archive, mirror: 0)?.absoluteString == "http://mirror.shop.lan/cdn/notes/stable/v1.2.0.tar.gz")
        #expect(transport.mirrorURL(of: archive, mirror: 1)?.absoluteString == "http://10.0.0.2:8080/stable/v1.2.0.tar.gz")
        let beta = try #require(URL(string: "https://cdn.example.com/notes/beta/manifest.json"))
        #expect(transport.mirrorURL(of: beta, mirror: 0)?.absoluteString == "http://mirror.shop.lan/cdn/notes/beta/manifest.json")
        #expect(transport.mirrorURL(of: beta, mirror: 1)?.absoluteString == "http://10.0.0.2:8080/beta/manifest.json")
        let outside = try #require(URL(string: "https://cdn.example.com/shared/v1.2.0.tar.gz"))
        #expect(transport.mirrorURL(of: outside, mirror: 0)?.absoluteString == "http://mirror.shop.lan/cdn/shared/v1.2.0.tar.gz")
        #expect(transport.mirrorURL(of: outside, mirror: 1) == nil, "outside the folder that mirror keeps")
        let elsewhere = try #require(URL(string: "https://other.example.com/notes/stable/v1.2.0.tar.gz"))
        #expect(transport.mirrorURL(of: elsewhere, mirror: 0) == nil, "another host is never mirrored")
    }

    @Test func theRulesOfMirrorURLs() throws {
        let manifest = try #require(URL(string: "https://cdn.example.com/notes/stable/manifest.json"))
        #expect(MirrorURLs.problem(["http://mirror.shop.lan/notes/stable/manifest.json"], manifestURL: manifest) == nil)
        #expect(MirrorURLs.problem(["https://mirror.shop.lan/stable/manifest.json"], manifestURL: manifest) == nil)
        #expect(MirrorURLs.problem(["ftp://mirror.shop.lan/manifest.json"], manifestURL: manifest)?.contains("https: or http:") == true)
        #expect(MirrorURLs.problem(["http://mirror.shop.lan/notes/stable/"], manifestURL: manifest)?.contains("manifest.json") == true)
        #expect(MirrorURLs.problem(["http://m/manifest.json", "http://m/manifest.json"], manifestURL: manifest)?.contains("twice") == true)
        #expect(MirrorURLs.problem(["http://m/manifest.json?x=1"], manifestURL: manifest)?.contains("query") == true)
        let file = URL(fileURLWithPath: "/srv/stable/manifest.json")
        #expect(MirrorURLs.problem(["http://m/manifest.json"], manifestURL: file)?.contains("file:") == true)
    }
}
