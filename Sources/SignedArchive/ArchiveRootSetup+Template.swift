import ClientUpdater
import Foundation

/// A packaged app's `DeviceTemplate` checked with `init`'s rules: what a device's first
/// start runs (ClientEngine's `TemplateRoot`) and what `clientctl package` runs on the
/// template it is about to ship (AppPackaging), so the release side needs no engine.
extension ArchiveRootSetup {
    /// Checks a template folder as its first start would (the template's format, then every
    /// field with `init`'s rules), creating nothing.
    /// - Throws: ``SignedArchiveError`` naming the field and why, or the trust root's refusal.
    package static func validate(template folder: String, now: Date = Date()) throws -> DeviceTemplate {
        let template = try DeviceTemplate.load(folder: folder)
        _ = try make(Request(template: template, folder: folder), now: now)
        return template
    }

    /// Checks the template's fields with `init`'s rules, its files named by the paths a
    /// caller has (`clientctl package` before it copies them), so a refusal names the
    /// file the user gave.
    /// - Throws: ``SignedArchiveError`` naming the field and why, or the trust root's refusal.
    package static func validate(
        _ template: DeviceTemplate, trustFiles: [String], trustRoot: String?, seed: String, now: Date = Date()
    ) throws {
        var request = Request(template: template, folder: "/")
        request.trustFiles = trustFiles
        request.trustRootFile = trustRoot
        request.embedded = seed
        _ = try make(request, now: now)
    }
}

extension ArchiveRootSetup.Request {
    /// `init`'s request for a template in `folder`, its paths made absolute.
    package init(template t: DeviceTemplate, folder: String) {
        self.init(
            app: t.app, channel: t.channel, manifestURL: t.manifestURL, trustFiles: t.trust.map { folder + "/" + $0 },
            shellVersion: t.shellVersion, embedded: folder + "/" + t.seed, startupTimeout: t.startupTimeoutSeconds, keep: t.keep,
            allowInsecureHTTP: false, limits: .init(), trustRootFile: t.trustRoot.map { folder + "/" + $0 })
    }
}
