import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import SignedArchive
import SignedManifest

/// A packaged app's device root, made and kept from its `DeviceTemplate`.
///
/// At every start of the app (`clientctl-shell --template`, `clientctl serve --template`):
/// - **first start**: the root is created from the template with `init`'s validation,
///   atomically; two first starts at once make one root (the decision is taken under the
///   root's lock);
/// - **every start**: the template's shell version and seed replace the config's, so a
///   package upgrade is the root's shell update (downloaded versions built for the old shell
///   are dropped by the engine at its start; releases whose `minShellVersion` the new shell
///   meets become installable);
/// - **trust**: a template's signed root is adopted only as the direct successor of the
///   root the device trusts (checked by the chain's rules); it never replaces a newer root
///   the device already holds, and keys are never swapped on an existing root;
/// - **a broken template** never touches an existing root: the root is used as it is and
///   the problem is reported (``Outcome/templateRefused(_:)``).
public enum TemplateRoot {
    /// What ``prepare(template:root:now:)`` did.
    public enum Outcome: Sendable, Equatable {
        /// The root was created from the template.
        case created
        /// The config took the template's shell version (and seed).
        case shellUpdated(from: String, to: String)
        /// Nothing needed changing.
        case unchanged
        /// The template could not be used; the existing root was left exactly as it was.
        case templateRefused(String)
    }

    /// The root a packaged app opens: `explicit` (a `--root` flag) when given, else the
    /// user's root of the template's app (`DeviceTemplate.userRoot(environment:)`).
    /// `CLIENTCTL_ROOT` is not consulted: a packaged app never follows another root by accident.
    /// - Throws: `UpdaterError` (ClientUpdater's `DeviceTemplate`) when the template cannot be
    ///   read and no root is given.
    public static func rootPath(explicit: String?, template folder: String) throws -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        return try DeviceTemplate.load(folder: folder).userRoot()
    }

    /// Makes or updates the root at `root` from the template folder `template`.
    /// - Returns: what changed, and the loaded template (its name and check interval).
    /// - Throws: ``EngineError`` `.configInvalid` when the template is broken and there is
    ///   no root yet, or the root belongs to another app or channel kind; `UpdaterError`
    ///   `.locked` when another process holds the root's lock for 30 s; any `init` refusal
    ///   of its fields.
    public static func prepare(template folder: String, root: String, now: Date = max(Date(), ProgramDate.released)) async throws -> (
        outcome: Outcome, template: DeviceTemplate?
    ) {
        let layout = RootLayout(root: root)
        let template: DeviceTemplate
        var made: (config: DeviceConfig, root: TrustRoot?)
        do {
            template = try DeviceTemplate.load(folder: folder)
            made = try ArchiveRootSetup.make(request(template, folder: folder), now: now)
        } catch let error as any ClientctlError {
            guard FileManager.default.fileExists(atPath: layout.config) else {
                throw EngineError(.configInvalid, "template \(folder): \(error.message)")
            }
            return (.templateRefused("template \(folder): \(error.message)"), nil)
        }
        if try await DeviceEngine.create(.init(config: made.config, trustRoot: made.root), at: layout, existing: .keep) {
            return (.created, template)
        }
        let wanted = made.config
        let before = try DeviceConfig.load(layout)
        let after = try await RootInitializer.update(layout) { config in
            guard config.app == wanted.app, config.channelKind == wanted.channelKind else {
                throw EngineError(
                    .configInvalid,
                    "\(layout.root) is a root of \(config.app) (\(config.channelKind.rawValue)), not of the template's \(wanted.app): pass another --root"
                )
            }
            guard config.shellVersion != wanted.shellVersion || config.embeddedPath != wanted.embeddedPath else { return false }
            config.shellVersion = wanted.shellVersion
            config.embeddedPath = wanted.embeddedPath
            return true
        }
        if let candidate = template.trustRoot { adoptSuccessor(folder + "/" + candidate, config: after, layout: layout) }
        guard before.shellVersion != after.shellVersion || before.embeddedPath != after.embeddedPath else { return (.unchanged, template) }
        return (.shellUpdated(from: before.shellVersion.description, to: after.shellVersion.description), template)
    }

    /// `init`'s request for the template, its paths made absolute.
    static func request(_ t: DeviceTemplate, folder: String) -> ArchiveRootSetup.Request {
        ArchiveRootSetup.Request(template: t, folder: folder)
    }

    static func trustStore(_ config: DeviceConfig, _ layout: RootLayout) throws -> TrustStore {
        TrustStore(layout: layout, settings: try config.settings(ArchiveSettings.self, layout: layout), app: config.app)
    }

    /// Stores the template's root when it is the direct, verified successor of the root the
    /// device trusts; an older, equal, skipped or unverified one is left unused.
    static func adoptSuccessor(_ path: String, config: DeviceConfig, layout: RootLayout) {
        guard let store = try? trustStore(config, layout), let current = try? store.current(),
            let data = try? BoundedFile.read(path, cap: TrustRoot.maxBytes, code: EngineError.Code.configInvalid),
            case .trusted(let next) = RootChain.verifyNext(data, after: current, source: path)
        else { return }
        try? store.save(next)
    }
}
