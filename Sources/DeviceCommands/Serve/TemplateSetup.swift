import ClientEngine
import ClientUpdater
import CommandSupport
import Foundation

/// `serve --template`: the packaged app's root, made or kept from its template before the
/// root is opened (``TemplateRoot``), with one line on stderr saying what changed.
enum TemplateSetup {
    struct Prepared {
        let root: String
        /// The template's check interval, when the template could be read.
        let checkInterval: Double?
    }

    static func prepare(_ folder: String, root explicit: String?) async throws -> Prepared {
        let root = try TemplateRoot.rootPath(explicit: explicit, template: folder)
        let (outcome, template) = try await TemplateRoot.prepare(template: folder, root: root)
        switch outcome {
        case .created: printError("clientctl serve: created \(root) from \(folder)")
        case .shellUpdated(let from, let to): printError("clientctl serve: shell \(from) → \(to): \(root) follows the installed package")
        case .templateRefused(let why): printError("clientctl serve: \(why); \(root) is used as it is")
        case .unchanged: break
        }
        return Prepared(root: root, checkInterval: template.map { Double($0.checkIntervalSeconds) })
    }
}
