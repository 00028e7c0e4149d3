import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest

/// Reading and writing a root file for the `root` commands.
enum RootFile {
    static func read(_ path: String) throws -> RootDraft {
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandError(.notFound, "\(path) does not exist") }
        return RootDraft(try TrustRoot.parse(data, source: path))
    }

    /// Writes `draft` (checked by parsing it back) atomically and says what it is now.
    static func write(_ draft: RootDraft, to path: String, note: String) throws {
        let root = try draft.root(source: path)
        do {
            try AtomicFile.write(Data(root.jsonBytes()), to: path)
        } catch let error as any ClientctlError {
            throw CommandError(.io, error.message)
        }
        let signers = root.signatures.map(\.keyId)
        print(
            "\(path): root \(root.version) of \(root.app) \(root.channel); \(note); "
                + "signed by \(signers.isEmpty ? "nobody yet" : signers.joined(separator: ", ")); "
                + "\(root.selfSigners.count) of \(root.root.threshold) own root signatures")
    }
}
