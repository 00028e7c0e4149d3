@testable import MeteorHotCodePush

/// The `__meteor_runtime_config__` reader of a downloaded index.html. Besides not crashing on
/// any page, a config it reads must agree with itself: checked against its own page version
/// (`autoupdate.versions["web.cordova"].version`, else the legacy `autoupdateVersionCordova`)
/// and app id it reports no mismatch. (A page carrying both, with different values, was the
/// first finding after the current-Meteor change: the property still read the legacy field.)
enum RuntimeConfigTarget: FuzzTarget {
    static let name = "runtime-config"

    static func run(_ data: [UInt8]) {
        let html = String(decoding: data, as: UTF8.self)
        guard let config = try? RuntimeConfig.extract(fromIndexHTML: html) else { return }
        guard let version = config.pageVersion else { return }
        if case .versionMismatch = config.problem(expectedVersion: version, currentRootURL: config.rootURL, currentAppId: config.appId) {
            FuzzFinding.fail(name, "a config disagrees with its own version")
        }
    }
}
