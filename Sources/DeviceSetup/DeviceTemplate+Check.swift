import Foundation

/// A packaged app's template checked with `init`'s rules: what a device's first start runs
/// (ClientEngine's `TemplateRoot`) and what `clientctl package` runs on the template it is
/// about to ship (AppPackaging), so the release side needs no engine and no channel.
extension DeviceTemplate {
    /// Reads `folder/device-template.json` and checks it as its first start would (the
    /// template's format, then every field with `init`'s rules), creating nothing.
    /// - Throws: ``DeviceSetupError`` naming the file or the field and why, or the trust
    ///   root's refusal.
    package static func check(folder: String, now: Date) throws -> DeviceTemplate {
        let template = try load(folder: folder)
        _ = try ArchiveSetupRequest(template: template, folder: folder).checked(now: now)
        return template
    }

    /// Checks the template's fields with `init`'s rules, its files named by the paths a
    /// caller has (`clientctl package` before it copies them), so a refusal names the
    /// file the user gave.
    /// - Throws: ``DeviceSetupError`` naming the field and why, or the trust root's refusal.
    package func check(trustFiles: [String], trustRoot: String?, seed: String, now: Date) throws {
        var request = ArchiveSetupRequest(template: self, folder: "/")
        request.trustFiles = trustFiles
        request.trustRootFile = trustRoot
        request.embedded = seed
        _ = try request.checked(now: now)
    }
}

extension ArchiveSetupRequest {
    /// `init`'s request for a template in `folder`, its paths made absolute.
    package init(template t: DeviceTemplate, folder: String) {
        self.init(
            app: t.app, channel: t.channel, manifestURL: t.manifestURL, trustFiles: t.trust.map { folder + "/" + $0 },
            shellVersion: t.shellVersion, embedded: folder + "/" + t.seed, deviceSettings: t.deviceSettings,
            allowInsecureHTTP: false, limits: .init(), trustRootFile: t.trustRoot.map { folder + "/" + $0 })
    }
}
