import ClientFoundation
import Foundation
import SignedManifest

/// Where a push goes (`s3://BUCKET/PREFIX`) and how to reach it, with the AWS conventions:
/// credentials from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, else the
/// profile (`AWS_PROFILE`, default `default`) of `~/.aws/credentials`
/// (`AWS_SHARED_CREDENTIALS_FILE`); region from the flag, `AWS_REGION`, `AWS_DEFAULT_REGION`,
/// else `us-east-1`; endpoint from the flag, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, else
/// AWS (`https://BUCKET.s3.REGION.amazonaws.com`). A custom endpoint is addressed
/// path-style (`ENDPOINT/BUCKET/KEY`), as S3-compatible servers expect.
public struct S3Location: Sendable, Equatable {
    public var bucket: String
    /// Key prefix without leading or trailing `/` (may be empty).
    public var prefix: String
    public var region: String
    public var endpoint: URL?
    public var credentials: SigV4.Credentials

    /// Parses `s3://BUCKET/PREFIX` and resolves the rest from `environment`.
    /// - Throws: `ArchivePublishingError` `.invalidArgument` for a bad URL or no credentials.
    public static func resolve(
        _ text: String, endpoint: String?, region: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> S3Location {
        guard text.hasPrefix("s3://") else { throw ArchivePublishingError(.invalidArgument, "\(text) is not an s3://BUCKET/PREFIX URL") }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        // S3's bucket naming rules: 3–63 of a–z, 0–9, '.', '-', starting and ending with a letter or digit.
        let edge = { (c: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) }
        guard (3...63).contains(bucket.utf8.count), bucket.utf8.allSatisfy({ edge($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }),
            let first = bucket.utf8.first, let last = bucket.utf8.last, edge(first), edge(last)
        else {
            throw ArchivePublishingError(.invalidArgument, "\(text): '\(bucket)' is not a bucket name (3–63 of a-z, 0-9, '.', '-')")
        }
        let prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
        let endpointText = endpoint ?? environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"]
        var endpointURL: URL?
        if let endpointText {
            guard let url = URL(string: endpointText), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ArchivePublishingError(.invalidArgument, "endpoint \(endpointText) is not an http(s) URL")
            }
            endpointURL = url
        }
        let resolvedRegion = region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        return S3Location(
            bucket: bucket, prefix: prefix, region: resolvedRegion, endpoint: endpointURL,
            credentials: try credentials(environment))
    }

    static func credentials(_ environment: [String: String]) throws -> SigV4.Credentials {
        if let id = environment["AWS_ACCESS_KEY_ID"], let secret = environment["AWS_SECRET_ACCESS_KEY"], !id.isEmpty, !secret.isEmpty {
            return .init(accessKeyId: id, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"])
        }
        let profile = environment["AWS_PROFILE"] ?? "default"
        let file = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.aws/credentials")
        if let text = try? String(contentsOfFile: file, encoding: .utf8), let found = profileCredentials(text, profile: profile) {
            return found
        }
        throw ArchivePublishingError(
            .invalidArgument,
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile '\(profile)' in \(file)")
    }

    /// The `aws_access_key_id`, `aws_secret_access_key` and `aws_session_token` of
    /// `[profile]` in an INI credentials file.
    static func profileCredentials(_ text: String, profile: String) -> SigV4.Credentials? {
        var section = ""
        var values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard section == profile, let eq = line.firstIndex(of: "=") else { continue }
            values[line[..<eq].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: eq)...].trimmingCharacters(
                in: .whitespaces)
        }
        guard let id = values["aws_access_key_id"], let secret = values["aws_secret_access_key"] else { return nil }
        return .init(accessKeyId: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
    }

    /// The URL of `key` (below the prefix).
    /// The bucket's own URL with a query (for `ListObjectsV2`), values percent-encoded as
    /// SigV4 expects.
    public func bucketURL(query: [(String, String)]) -> URL? {
        let text = query.map { "\(SigV4.encode($0.0))=\(SigV4.encode($0.1))" }.joined(separator: "&")
        if let endpoint {
            let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
            return URL(string: "\(base)/\(bucket)?\(text)")
        }
        return URL(string: "https://\(bucket).s3.\(region).amazonaws.com/?\(text)")
    }

    public func url(for key: String) -> URL? {
        let full = prefix.isEmpty ? key : prefix + "/" + key
        let path = full.split(separator: "/").map { SigV4.encode(String($0)) }.joined(separator: "/")
        if let endpoint {
            let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
            return URL(string: "\(base)/\(bucket)/\(path)")
        }
        return URL(string: "https://\(bucket).s3.\(region).amazonaws.com/\(path)")
    }
}
