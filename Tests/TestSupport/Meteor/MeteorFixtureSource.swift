import Foundation

/// Which Meteor app a test runs on: one the repository generates in a ``MeteorShape``
/// (always), or the original plugin's reference fixtures (only when
/// `CLIENTCTL_METEOR_REFERENCE` names them; `Scripts/meteor-reference-replay` sets it).
public enum MeteorFixtureSource: Sendable, CustomStringConvertible {
    case generated(MeteorShape)
    case reference

    /// Both generated shapes, then the reference set when it is requested.
    public static var all: [MeteorFixtureSource] {
        MeteorShape.allCases.map { .generated($0) } + referenceIfRequested
    }

    /// The legacy shape (the reference fixtures' era: `?<sha1>` cache busters,
    /// `autoupdateVersionCordova`), then the reference set when it is requested.
    public static var legacyAndReference: [MeteorFixtureSource] { [.generated(.legacy)] + referenceIfRequested }

    static var referenceIfRequested: [MeteorFixtureSource] { MeteorFixtures.referenceRequested ? [.reference] : [] }

    public var description: String {
        switch self {
        case .reference: return "reference fixtures"
        case .generated(let shape): return "generated \(shape) Meteor"
        }
    }

    /// The fixture folder of this source: written into a fresh temp folder (generated) or
    /// the folder `CLIENTCTL_METEOR_REFERENCE` names (read-only).
    /// - Throws: ``HarnessError`` when the reference set is asked for and absent.
    public func materialize() throws -> MeteorFixtureFolder {
        switch self {
        case .reference:
            return MeteorFixtureFolder(root: try MeteorFixtures.reference(), scenario: nil, folder: nil)
        case .generated(let shape):
            let folder = try TemporaryDirectory("meteor-fixtures-\(shape)")
            let scenario = try MeteorScenarioFixtures.write(shape, to: folder.path)
            return MeteorFixtureFolder(root: folder.path, scenario: scenario, folder: folder)
        }
    }
}

/// A fixture folder in the reference layout (`bundled_www`, `downloadable_versions`,
/// `partially_downloaded_versions`), alive as long as this value.
public struct MeteorFixtureFolder: Sendable {
    public let root: String
    /// The generated set; `nil` for the reference fixtures.
    public let scenario: MeteorScenarioFixtures?
    let folder: TemporaryDirectory?

    /// `bundled_www`: the app's www folder (`cordova_plugins.js` beside `application`).
    public var bundledWWW: String { root + "/bundled_www" }
    /// `bundled_www/application`: the embedded bundle, version1.
    public var embedded: String { bundledWWW + "/application" }
    /// `downloadable_versions`: one folder per server state.
    public var versions: String { root + "/downloadable_versions" }

    /// The appId the embedded index.html carries.
    public var appId: String { scenario == nil ? "1waqgcidafgwubeqj8o" : MeteorScenarioFixtures.appId }

    /// The `<title>` of the embedded index.html.
    public var title: String { scenario == nil ? "<title>mobileapp</title>" : "<title>generated meteor app</title>" }

    /// A client script entry of the embedded manifest with a `?<hash>` cache buster (the
    /// first one, or the one at `urlPath`).
    public func cacheBustedScript(_ urlPath: String? = nil) throws -> CacheBustedScript {
        let data = try Data(contentsOf: URL(fileURLWithPath: embedded + "/program.json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let entries = object["manifest"] as? [[String: Any]]
        else { throw HarnessError("\(embedded)/program.json: no manifest list") }
        for e in entries where e["type"] as? String == "js" {
            guard let url = e["url"] as? String, let hash = e["hash"] as? String, let size = e["size"] as? Int else { continue }
            let parts = url.split(separator: "?", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[1] == hash, urlPath == nil || parts[0] == urlPath else { continue }
            return CacheBustedScript(urlPath: parts[0], hash: hash, size: size, sourceMapURL: e["sourceMapUrl"] as? String)
        }
        throw HarnessError("\(embedded)/program.json: no js entry \(urlPath ?? "") with a ?<hash> cache buster")
    }
}

/// A script entry of a manifest whose URL carries `?<hash>`.
public struct CacheBustedScript: Sendable {
    /// The URL path without the query.
    public let urlPath: String
    public let hash: String
    public let size: Int
    public let sourceMapURL: String?
}
