import Foundation

/// A Meteor 3 app bundled by `@meteorjs/capacitor` (``MeteorCapacitorBuild``) and the
/// server states it meets, as committed under `Fixtures/meteor/capacitor/` (README.md there
/// says where each rule comes from):
///
/// - `seed/` – the webDir of generation 1 built with `hcp: "webapp"` (program.json shipped,
///   URLs without `/__cordova/`, versions hashed over `{}`): 7 files;
/// - `seed_hcp_none/` – the same build with `hcp: "none"` (no program.json);
/// - `seed_autoupdate/` – the same build with `AUTOUPDATE_VERSION=release-1`;
/// - `downloadable_versions/same_build` – generation 1 as a Meteor 3 server serves it (its
///   version hashed over `{"PUBLIC_SETTINGS":{}}`);
/// - `downloadable_versions/next_version` – generation 2: the bundle (script, map, stats)
///   and `some-file` change, the CSS, its map and `some-text.txt` do not;
/// - `downloadable_versions/settings_bump` – generation 1 with other `Meteor.settings.public`;
/// - `downloadable_versions/release-1` – generation 1 on a server with `AUTOUPDATE_VERSION=release-1`.
public struct MeteorCapacitorFixtures: Sendable {
    /// The folder holding the seeds and `downloadable_versions/`.
    public let root: String

    public init(root: String) { self.root = root }

    public var seed: String { root + "/seed" }
    public var seedWithoutHCP: String { root + "/seed_hcp_none" }
    public var seedWithAutoupdateVersion: String { root + "/seed_autoupdate" }
    public var versions: String { root + "/downloadable_versions" }
    /// The `AUTOUPDATE_VERSION` of `seed_autoupdate` and of the `release-1` server.
    public static let autoupdateVersion = "release-1"

    /// Generation `g` of the app: the scenario app's scripts and CSS, two public files.
    public static func content(_ generation: Int) -> MeteorAppContent {
        var c = MeteorScenarioFixtures.content(generation)
        c.publicFiles = c.publicFiles.filter { ["some-file", "some-text.txt"].contains($0.name) }
        return c
    }

    /// The server states by folder name, as a Meteor 3 server renders them.
    public static func serverStates() throws -> [(name: String, version: MeteorRenderedVersion)] {
        var settings = content(1)
        settings.publicSettings = #"{"greeting":"hello"}"#
        var release = content(1)
        release.version = autoupdateVersion
        return [
            ("same_build", try MeteorCapacitorBuild.served(content(1))),
            ("next_version", try MeteorCapacitorBuild.served(content(2))),
            ("settings_bump", try MeteorCapacitorBuild.served(settings)),
            (autoupdateVersion, MeteorShapedApp.render(release, shape: .current)),
        ]
    }

    /// The server state `name`.
    public func rendered(_ name: String) throws -> MeteorRenderedVersion {
        guard let state = try Self.serverStates().first(where: { $0.name == name }) else { throw HarnessFixtureError(name) }
        return state.version
    }

    /// Writes the whole set into `root`.
    @discardableResult
    public static func write(to root: String) throws -> MeteorCapacitorFixtures {
        let set = MeteorCapacitorFixtures(root: root)
        let build = MeteorShapedApp.render(content(1), shape: .current)
        try MeteorCapacitorBuild.writeSeed(build, to: set.seed)
        try MeteorCapacitorBuild.writeSeed(build, options: .init(hcp: .none), to: set.seedWithoutHCP)
        try MeteorCapacitorBuild.writeSeed(build, options: .init(autoupdateVersion: autoupdateVersion), to: set.seedWithAutoupdateVersion)
        for (name, version) in try serverStates() { try MeteorScenarioFixtures.writeServer(version, to: set.versions + "/" + name) }
        return set
    }

    /// The distinct files (by manifest `path`) of server state `name` whose bytes differ from
    /// the seed's: what a next version must cost, and no more.
    public func changedFiles(_ name: String) throws -> [MeteorServedFile] {
        let seedFiles = MeteorShapedApp.render(Self.content(1), shape: .current).files
        let old = Dictionary(seedFiles.map { ($0.path, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        var seen = Set<String>()
        return try rendered(name).files.filter { old[$0.path] != $0.bytes && seen.insert($0.path).inserted }
    }
}

/// Where the Meteor benchmarks write their tables (`CLIENTCTL_BENCH_OUT`, set by Scripts/bench/meteor).
public enum MeteorBenchmarkOutput {
    /// Appends `text` to the file `CLIENTCTL_BENCH_OUT` names; nothing when it is unset.
    public static func emit(_ text: String) {
        guard let out = ProcessInfo.processInfo.environment["CLIENTCTL_BENCH_OUT"], let handle = FileHandle(forWritingAtPath: out) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data((text + "\n").utf8))
    }
}
