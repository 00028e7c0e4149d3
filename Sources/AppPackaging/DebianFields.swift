import ClientFoundation
import Foundation

/// The control fields of a package, checked as Debian checks them (Debian Policy §5.6).
package enum DebianFields {
    /// A binary package name: lower-case letters, digits, `+`, `-`, `.`; at least two
    /// characters, starting with a letter or digit (Policy §5.6.1).
    package static func checkPackageName(_ name: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789+-.")
        guard name.count >= 2, let first = name.first, first.isASCII, first.isLetter || first.isNumber,
            name.allSatisfy({ allowed.contains($0) })
        else {
            throw PackageError(
                .invalidArgument,
                "--package '\(name)' is not a Debian package name: lower-case letters, digits, '+', '-' and '.', at least 2, starting with a letter or digit"
            )
        }
    }

    /// The Debian version of a SemVer version: a pre-release's `-` becomes `~`, which sorts
    /// before the release as SemVer's pre-release does (`1.0.0~beta.1` < `1.0.0`); build
    /// metadata keeps its `+`. The result is a native version (no Debian revision), so a
    /// `-` inside a pre-release identifier cannot be carried and is refused.
    package static func debianVersion(of version: Version) throws -> String {
        let text = version.description
        let core: Substring
        var rest = ""
        if let plus = text.firstIndex(of: "+") {
            core = text[..<plus]
            rest = String(text[plus...])
        } else {
            core = Substring(text)
        }
        let dash = core.firstIndex(of: "-")
        let pre = dash.map { core[core.index(after: $0)...] } ?? ""
        guard !pre.contains("-"), !rest.contains("-") else {
            throw PackageError(
                .invalidArgument,
                "--version \(text): a '-' inside the pre-release or build identifiers cannot be carried by a native Debian version (Policy §5.6.12); use '.' instead"
            )
        }
        guard let dash else { return String(core) + rest }
        return core[..<dash] + "~" + pre + rest
    }

    /// `Name <email>`, as the Maintainer field takes it (Policy §5.6.2).
    package static func checkMaintainer(_ text: String) throws {
        let refusal = PackageError(.invalidArgument, "--maintainer '\(text)' is not 'Full Name <email@example.com>'")
        guard text.hasSuffix(">"), let open = text.lastIndex(of: "<"), !text.contains("\n") else { throw refusal }
        let name = text[..<open].trimmingCharacters(in: .whitespaces)
        let email = text[text.index(after: open)..<text.index(before: text.endIndex)]
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard !name.isEmpty, !name.contains("<"), !name.contains(">"), !name.contains(","), parts.count == 2,
            !parts[0].isEmpty, parts[1].contains("."), !email.contains(where: { $0 == " " || $0 == "<" })
        else { throw refusal }
    }

    /// A one-line text for a field (a synopsis, a display name): printable, no newline.
    package static func checkLine(_ text: String, flag: String, max: Int = 80) throws {
        guard !text.isEmpty, text.count <= max, !text.contains(where: { $0.isNewline || ($0.asciiValue.map { $0 < 0x20 } ?? false) }) else {
            throw PackageError(.invalidArgument, "\(flag) must be one line of 1 to \(max) printable characters")
        }
    }
}
