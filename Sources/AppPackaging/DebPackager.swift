import ClientFoundation
import DeviceSetup
import Foundation
import SafeArchive

/// `clientctl package`: a client build becomes a Debian package of a native app whose web
/// layer then updates itself (docs/packaging.md).
///
/// Everything is checked before anything is written: the control fields (Debian's rules),
/// the icon, the seed (the rules `publish` applies), the template (the rules `init`
/// applies) and the binaries (self-contained). The tree is staged in a scratch folder
/// inside `out`, built by `dpkg-deb` with the dates clamped to `SOURCE_DATE_EPOCH` and root
/// as owner, so the same inputs give the same bytes, and renamed into place; an existing
/// .deb is never overwritten with other bytes.
package enum DebPackager {
    /// The time every file and the changelog carry when `SOURCE_DATE_EPOCH` is unset
    /// (2000-01-01, as publish's archives).
    package static let defaultEpoch: Int64 = 946_684_800

    /// Builds the package.
    /// - Parameters:
    ///   - binaries: the programs to ship; `nil`: the ones beside this process.
    ///   - deviceProgram: the device program to ship when `binaries` is `nil`
    ///     (`--device-program`); `nil`: the one beside this process.
    ///   - environment: where `SOURCE_DATE_EPOCH` is read.
    /// - Throws: ``PackageError``, or the seed's `SafeArchiveError` and the template's
    ///   `UpdaterError` (each naming what and why); nothing is left in `out` then.
    package static func build(
        _ request: PackageRequest, binaries: ShippedBinaries? = nil, deviceProgram: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PackageResult {
        var request = request
        // Tools run in folders of their own: every path they are given is absolute.
        request.out = request.out.absoluteStandardizedPath
        request.buildDirectory = request.buildDirectory.absoluteStandardizedPath
        let debianVersion = try checkFields(request)
        let epoch = try sourceDateEpoch(environment)
        let icon = try AppIcon.load(request.icon)
        let vendorCopyright = try request.copyrightFile.map(readCopyright)
        let aptKeyring = try request.aptSource.map(checkAptSource)
        let seed = try SourceTree.scan(request.buildDirectory)
        // The template as a device's first start will check it, on the files the user named.
        try template(request).check(
            trustFiles: try request.trust.map { try existing($0, flag: "--trust") },
            trustRoot: try request.trustRoot.map { try existing($0, flag: "--trust-root") }, seed: request.buildDirectory, now: Date())
        let shipped =
            try binaries
            ?? withScratch(NSTemporaryDirectory() + "clientctl-package-\(getpid())") { scratch in
                try deviceProgram.map { try ShippedBinaries.checked($0.absoluteStandardizedPath, scratch: scratch) }
                    ?? ShippedBinaries.beside(scratch: scratch)
            }
        let madeOut = !FileManager.default.fileExists(atPath: request.out)
        try AtomicFile.makeDirectory(request.out)
        do {
            return try build(
                request, debianVersion: debianVersion, epoch: epoch, icon: icon, vendorCopyright: vendorCopyright, aptKeyring: aptKeyring,
                seed: seed, shipped: shipped)
        } catch {
            if madeOut { rmdir(request.out) }  // only when empty: a failed build leaves no trace
            throw error
        }
    }

    /// Runs `body` with a fresh scratch folder, removed afterwards whatever happens.
    static func withScratch<T>(_ path: String, _ body: (String) throws -> T) throws -> T {
        try? AtomicFile.removeTree(path)
        try AtomicFile.makeDirectory(path)
        defer { try? AtomicFile.removeTree(path) }
        return try body(path)
    }

    /// The build once every input was checked: staging, Depends, control, dpkg-deb.
    private static func build(
        _ request: PackageRequest, debianVersion: String, epoch: Int64, icon: AppIcon, vendorCopyright: String?, aptKeyring: Data?,
        seed: SourceTree, shipped: ShippedBinaries
    ) throws -> PackageResult {
        try withScratch(request.out + "/.\(request.package).staging-\(getpid())") { scratch in
            try stage(
                request, debianVersion: debianVersion, epoch: epoch, icon: icon, vendorCopyright: vendorCopyright, aptKeyring: aptKeyring,
                seed: seed, shipped: shipped, scratch: scratch)
        }
    }

    private static func stage(
        _ request: PackageRequest, debianVersion: String, epoch: Int64, icon: AppIcon, vendorCopyright: String?, aptKeyring: Data?,
        seed: SourceTree, shipped: ShippedBinaries, scratch: String
    ) throws -> PackageResult {
        let architecture = try ToolRun(tool: "dpkg", arguments: ["--print-architecture"], timeout: .seconds(60)).run(scratch: scratch)
            .standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let staging = DebStaging(root: scratch + "/tree")
        let texts = PackageTexts(request: request, debianVersion: debianVersion)
        let share = "usr/share/\(request.package)"

        // The template and its seed first: checked as a device's first start checks them.
        for entry in seed.entries {
            if entry.isDirectory {
                try staging.makeFolder("\(share)/www/\(entry.path)")
            } else {
                try staging.copy(seed.root + "/" + entry.path, to: "\(share)/www/\(entry.path)", mode: entry.isExecutable ? 0o755 : 0o644)
            }
        }
        var trustNames: [String] = []
        for (index, file) in request.trust.enumerated() {
            let name = "trust/key-\(index + 1).pub.pem"
            try staging.copy(try existing(file, flag: "--trust"), to: "\(share)/\(name)", mode: 0o644)
            trustNames.append(name)
        }
        if let root = request.trustRoot { try staging.copy(try existing(root, flag: "--trust-root"), to: "\(share)/trust/root.json", mode: 0o644) }
        let template = Self.template(request)
        guard template.trust == trustNames else { throw PackageError(.io, "the staged keys are not the template's") }
        try staging.write(try template.encoded(), to: "\(share)/\(DeviceTemplate.fileName)")
        _ = try DeviceTemplate.check(folder: staging.path(share), now: Date())

        // Programs, desktop integration, units, documentation.
        try staging.copy(shipped.device, to: "usr/lib/\(request.package)/clientctl", mode: 0o755)
        try staging.link("usr/lib/\(request.package)/clientctl-shell", to: "clientctl")
        try staging.write(texts.launcher, to: "usr/bin/\(request.package)", mode: 0o755)
        try staging.write(texts.desktopEntry(iconName: request.package), to: "usr/share/applications/\(request.package).desktop")
        try staging.write(icon.bytes, to: "usr/share/icons/hicolor/\(icon.folder)/apps/\(request.package).\(icon.fileExtension)")
        try staging.write(texts.userUnit, to: "usr/lib/systemd/user/\(request.package).service")
        try staging.write(texts.systemUnit, to: "lib/systemd/system/\(request.package)-serve.service")
        try staging.write(texts.mediaUnit, to: String(texts.mediaUnitPath.dropFirst()))
        try staging.write(texts.mediaRule, to: String(texts.mediaRulePath.dropFirst()))
        try staging.write(texts.copyright(vendorText: vendorCopyright), to: "usr/share/doc/\(request.package)/copyright")
        try staging.write(texts.lintianOverrides, to: "usr/share/lintian/overrides/\(request.package)")
        try staging.writeGzip(
            texts.changelog(date: Date(timeIntervalSince1970: TimeInterval(epoch))), to: "usr/share/doc/\(request.package)/changelog",
            scratch: scratch)
        try staging.writeGzip(texts.manPage, to: "usr/share/man/man1/\(request.package).1", scratch: scratch)

        // The apt source: the repository's key for this source only, the source a conffile.
        var conffiles: [String] = []
        if let source = request.aptSource, let aptKeyring {
            try staging.write(aptKeyring, to: String(texts.keyringPath.dropFirst()))
            try staging.write(texts.aptSources(source), to: String(texts.sourcesPath.dropFirst()))
            conffiles.append(texts.sourcesPath)
        }

        let depends = try shlibDepends([staging.path("usr/lib/\(request.package)/clientctl")], scratch: scratch)
        let installedSize = staging.installedSizeKiB()
        try staging.write(try staging.md5sums(excluding: Set(conffiles)), to: "DEBIAN/md5sums")
        if !conffiles.isEmpty { try staging.write(conffiles.map { $0 + "\n" }.joined(), to: "DEBIAN/conffiles") }
        try staging.write(texts.control(architecture: architecture, depends: depends, installedSize: installedSize), to: "DEBIAN/control")

        let name = "\(request.package)_\(debianVersion)_\(architecture).deb"
        let built = scratch + "/" + name
        _ = try ToolRun(
            tool: "dpkg-deb", arguments: ["--root-owner-group"] + request.compression.dpkgArguments + ["--build", staging.root, built],
            environment: ["SOURCE_DATE_EPOCH": String(epoch)]
        ).run(scratch: scratch)
        let target = request.out + "/" + name
        let sha = try Digest.hex(.sha256, ofFileAt: built)
        let size = Int64((try? FileManager.default.attributesOfItem(atPath: built)[.size] as? Int) ?? 0)
        var unchanged = false
        if FileManager.default.fileExists(atPath: target) {
            guard (try? Digest.hex(.sha256, ofFileAt: target)) == sha else {
                throw PackageError(.alreadyExists, "\(target) exists with other bytes: a version is packaged once (raise --version)")
            }
            unchanged = true
        } else if rename(built, target) != 0 {
            throw PackageError(.io, "cannot write \(target): \(String(cString: strerror(errno)))")
        }
        return PackageResult(
            path: target, bytes: size, sha256: sha, debianVersion: debianVersion, architecture: architecture, depends: depends,
            installedSizeKiB: installedSize, unchanged: unchanged)
    }

    /// The device template the package carries: its keys are `trust/key-N.pub.pem`, its
    /// pinned root `trust/root.json`, its seed `www`.
    static func template(_ request: PackageRequest) -> DeviceTemplate {
        DeviceTemplate(
            app: request.app, name: request.name, channel: request.channel, manifestURL: request.manifestURL,
            trust: request.trust.indices.map { "trust/key-\($0 + 1).pub.pem" },
            trustRoot: request.trustRoot == nil ? nil : "trust/root.json", shellVersion: request.version.description,
            deviceSettings: request.deviceSettings, checkIntervalSeconds: request.checkIntervalSeconds,
            origin: request.origin == "app" ? nil : request.origin)
    }

    /// The control fields and names, checked before anything is read or written.
    static func checkFields(_ r: PackageRequest) throws -> String {
        try DebianFields.checkPackageName(r.package)
        let version = try DebianFields.debianVersion(of: r.version)
        try DebianFields.checkMaintainer(r.maintainer)
        try DebianFields.checkLine(r.name, flag: "--name")
        if let description = r.description {
            try DebianFields.checkLine(description, flag: "--description")
            guard !description.lowercased().hasPrefix(r.package) else {
                throw PackageError(
                    .invalidArgument, "--description must not start with the package name \(r.package) (Debian Policy §3.4.1: it is shown beside it)")
            }
        }
        guard PackageRequest.categories.contains(r.category) else {
            throw PackageError(
                .invalidArgument, "--category \(r.category) is not a main category: \(PackageRequest.categories.joined(separator: ", "))")
        }
        let sectionCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-/")
        guard !r.section.isEmpty, r.section.allSatisfy({ sectionCharacters.contains($0) }) else {
            throw PackageError(.invalidArgument, "--section '\(r.section)' is not a Debian section (e.g. web, net, misc)")
        }
        return version
    }

    /// The `--apt-repo` URL and `--apt-suite` checked, and the `--apt-key` as the binary
    /// keyring the package ships.
    static func checkAptSource(_ source: AptSource) throws -> Data {
        guard let url = URL(string: source.url), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host?.isEmpty == false,
            url.query == nil, url.fragment == nil, url.user == nil, !source.url.contains(where: { $0.isWhitespace })
        else {
            throw PackageError(.invalidArgument, "--apt-repo \(source.url) is not an http: or https: URL of a repository (no query, user or spaces)")
        }
        do {
            try AptRepository.checkSuite(source.suite)
        } catch {
            throw PackageError(.invalidArgument, "--apt-suite '\(source.suite)' is not a suite name ([a-z0-9][a-z0-9.+-]*, e.g. stable)")
        }
        let path = try existing(source.keyFile, flag: "--apt-key")
        guard let data = try BoundedFile.read(path, cap: 1 << 20, code: PackageErrorCode.unusableKey) else {
            throw PackageError(.notFound, "--apt-key \(path): no such file")
        }
        let key = try OpenPGPKey(data, label: "--apt-key \(path)")
        guard !key.hasSecretKey else {
            throw PackageError(
                .unusableKey, "--apt-key \(path) holds a secret key: give the public key (gpg --export --armor), never ship a secret one")
        }
        return key.binary
    }

    static func sourceDateEpoch(_ environment: [String: String]) throws -> Int64 {
        guard let text = environment["SOURCE_DATE_EPOCH"] else { return defaultEpoch }
        guard let value = Int64(text), value >= 0 else {
            throw PackageError(.invalidArgument, "SOURCE_DATE_EPOCH '\(text)' is not a number of seconds since 1970")
        }
        return value
    }

    static func existing(_ path: String, flag: String) throws -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { throw PackageError(.notFound, "\(flag) \(path): no such file") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw PackageError(.rejected, "\(flag) \(path) is not a regular file") }
        return path
    }

    static func readCopyright(_ path: String) throws -> String {
        guard let data = try BoundedFile.read(path, cap: 1 << 20, code: PackageErrorCode.rejected) else {
            throw PackageError(.notFound, "--copyright \(path): no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw PackageError(.rejected, "--copyright \(path) is not UTF-8 text") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The Depends field `dpkg-shlibdeps` computes for `binaries` (run in a folder holding
    /// the `debian/control` it insists on).
    static func shlibDepends(_ binaries: [String], scratch: String) throws -> String {
        let source = scratch + "/shlibdeps"
        try AtomicFile.makeDirectory(source + "/debian")
        try AtomicFile.write(Data("Source: clientctl-app\n\nPackage: clientctl-app\nArchitecture: any\n".utf8), to: source + "/debian/control")
        let output = try ToolRun(tool: "dpkg-shlibdeps", arguments: ["-O"] + binaries, directory: source).run(scratch: scratch)
        for line in output.standardOutput.split(separator: "\n") where line.hasPrefix("shlibs:Depends=") {
            return String(line.dropFirst("shlibs:Depends=".count))
        }
        return ""
    }
}
