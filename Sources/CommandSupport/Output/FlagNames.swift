import ClientFoundation

/// Says library errors in the command line's words: a ``FieldProblem`` names the flag the
/// user typed instead of the request field, and other fields quoted in backticks
/// (`` `allowInsecureHTTP` ``) become their flags. The libraries know no flags.
package enum FlagNames {
    /// Request and config fields → the flags that set them.
    package static let byField: [String: String] = [
        "app": "--app", "channel": "--channel", "manifestURL": "--manifest-url", "shellVersion": "--shell-version",
        "trustFiles": "--trust", "trustRootFile": "--trust-root", "embedded": "--embedded", "startupTimeout": "--startup-timeout",
        "startupTimeoutSeconds": "--startup-timeout", "keep": "--keep", "reportURL": "--report-url",
        "limits": "--max-unpacked-bytes and --max-entries", "meteorURL": "--meteor-url", "compatPlatform": "--compat-platform",
        "allowInsecureHTTP": "--allow-insecure-http", "minShellVersion": "--min-shell", "maxShellVersion": "--max-shell",
        "expires": "--expires", "revoked": "--revoke", "baseURL": "--base-url", "prefix": "--out", "force": "--force", "init": "clientctl init",
    ]

    /// The one line to print for `error`.
    package static func message(for error: any ClientctlError) -> String {
        if let field = error.underlying as? FieldProblem {
            return "\(flag(field.field)) \(replacingQuotedFields(in: field.problem))"
        }
        return replacingQuotedFields(in: error.message)
    }

    package static func flag(_ field: String) -> String { byField[field] ?? field }

    /// `` `name` `` → the flag of `name` (known fields only; others lose their backticks).
    package static func replacingQuotedFields(in text: String) -> String {
        let parts = text.split(separator: "`", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return text }
        var out = ""
        for (i, part) in parts.enumerated() {
            // Odd parts sit between a pair of backticks; a last odd part has no closing one.
            if i % 2 == 1, i < parts.count - 1 || parts.count % 2 == 1 {
                out += flag(String(part))
            } else {
                if i % 2 == 1 { out += "`" }
                out += part
            }
        }
        return out
    }
}
