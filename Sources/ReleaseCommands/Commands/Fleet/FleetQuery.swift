import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import CommandSupport
import FleetReports
import Foundation
import Synchronization

/// `GET /v1/fleet` of a collector with its read token, over the device's transport
/// (``DefaultTransport``: the environment's proxies, the system trust store or
/// `SSL_CERT_FILE`), for `clientctl fleet status` and `clientctl rollout guard`.
///
/// No redirect is followed: the bearer token goes to `--collector`'s host and port and
/// nowhere else (curl stopped sending credentials on a redirect to another host in 2018,
/// CVE-2018-1000007; here the rule is simpler still). A 3xx is a usage error naming the
/// status and the `Location`, as report delivery refuses redirects too.
struct FleetQuery {
    /// The collector's base URL (`http://127.0.0.1:9400/`).
    var collector: URL
    /// The read token (the collector's `--read-token-file`).
    var token: String
    var app: String
    var channel: String
    /// Seconds; nil: the collector's default.
    var windowSeconds: Int?
    /// The cohort: only devices whose latest labels include these (`--label`); empty: all.
    var labels = LabelFilter()

    /// The largest answer read: a summary holds at most 100 silent devices and a bounded
    /// timeline, far below this.
    static let maxAnswerBytes = 16 << 20

    /// The answer: its bytes as the collector sent them and the summary they hold.
    struct Answer {
        var json: Data
        var summary: FleetSummary
    }

    /// Reads the token file: its first line, trimmed.
    /// - Throws: ``CommandError`` `.notFound` (missing, unreadable), `.rejected` (empty, too long).
    static func token(file path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError(.notFound, "--token-file \(path): cannot be read (\(String(cString: strerror(errno))))")
        }
        guard data.count <= 4096 else { throw CommandError(.rejected, "--token-file \(path): over 4096 bytes, not a token") }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw CommandError(.rejected, "--token-file \(path): not a token (printable ASCII without spaces)")
        }
        return token
    }

    /// The URL of the summary.
    var url: URL {
        get throws {
            var components = URLComponents(url: collector, resolvingAgainstBaseURL: false)
            guard let scheme = components?.scheme?.lowercased(), scheme == "http" || scheme == "https", components?.host?.isEmpty == false
            else {
                throw CommandError(.invalidArgument, "--collector \(collector.absoluteString): not an http: or https: URL")
            }
            let base = components?.path ?? ""
            components?.path = (base.hasSuffix("/") ? base : base + "/") + "v1/fleet"
            components?.percentEncodedQueryItems = CollectorClient.percentEncoded(
                [URLQueryItem(name: "app", value: app), URLQueryItem(name: "channel", value: channel)]
                    + (windowSeconds.map { [URLQueryItem(name: "window", value: String($0))] } ?? [])
                    + Self.labelItems(labels))
            guard let url = components?.url else {
                throw CommandError(.invalidArgument, "--collector \(collector.absoluteString): cannot make the request URL")
            }
            return url
        }
    }

    /// Asks the collector.
    /// - Throws: ``UpdaterError`` `.network` (collector down or silent: exit 69);
    ///   ``CommandError`` `.unauthorized` (401: exit 78), `.unavailable` (5xx, 429: exit 69),
    ///   `.invalidArgument` (400, or a 3xx: a redirect, not followed: exit 64), `.rejected`
    ///   (any other status, an answer that is not a fleet summary or is over
    ///   ``maxAnswerBytes``, a summary not of the cohort asked for: exit 65).
    func fetch(transport: any Transport = DefaultTransport()) async throws -> Answer {
        let url = try url
        let client = CollectorClient(collector: collector, token: token, transport: transport, maxAnswerBytes: Self.maxAnswerBytes)
        let data = try await client.get(url: url)
        let summary: FleetSummary
        do {
            summary = try FleetSummary.decoder().decode(FleetSummary.self, from: data)
        } catch {
            throw CommandError(.rejected, "GET \(url.absoluteString): the answer is not a fleet summary (\(Self.oneLine(error)))")
        }
        try Self.check(cohort: summary.labels, asked: labels, url: url)
        return Answer(json: data, summary: summary)
    }

    /// `--label` flags as a filter.
    /// - Throws: ``CommandError`` `.invalidArgument` (exit 64), one line naming the flag and why.
    static func labelFilter(_ flags: [String]) throws -> LabelFilter {
        do {
            return try LabelFilter(flags)
        } catch let error as FleetReportsError {
            throw CommandError(.invalidArgument, "--" + oneLine(error.message))
        }
    }

    /// The `label=KEY=VALUE` query items of `labels`, in key order.
    static func labelItems(_ labels: LabelFilter) -> [URLQueryItem] {
        labels.assignments.map { URLQueryItem(name: "label", value: $0) }
    }

    /// Refuses an answer whose cohort is not the one asked for: a collector before labels
    /// ignores `label` and would answer for every device, which must not pass for the cohort's figures.
    /// - Throws: ``CommandError`` `.rejected` (exit 65).
    static func check(cohort: [String: String]?, asked: LabelFilter, url: URL) throws {
        guard (cohort ?? [:]) != asked.labels else { return }
        let what = cohort.map { "the devices labelled '\(oneLine(LabelFilter.text($0)))'" } ?? "every device"
        throw CommandError(
            .rejected,
            "GET \(url.absoluteString): the collector answered for \(what), not for --label \(asked.assignments.joined(separator: " --label ")) "
                + "(a collector before labels ignores --label: upgrade it)")
    }

    /// The error of a status other than 200, with the collector's own `{"error": …}` line;
    /// for a 3xx, its `Location` (never followed: see ``FleetQuery``).
    static func refusal(_ status: Int, body: Data, url: URL, location: String? = nil, method: String = "GET") -> CommandError {
        if (300...399).contains(status) {
            let target = location.map { "'" + oneLine($0) + "'" } ?? "no Location"
            return CommandError(
                .invalidArgument,
                "\(method) \(url.absoluteString): the collector answered \(status) to \(target): redirects are not followed, "
                    + "so the token stays with --collector; use the final URL")
        }
        var why = "HTTP \(status)"
        if let object = try? JSONSerialization.jsonObject(with: body.prefix(4096)) as? [String: Any], let error = object["error"] as? String {
            why += ": " + oneLine(error)
        }
        let what = "\(method) \(url.absoluteString)"
        switch status {
        case 401, 403:
            let file = method == "GET" ? "--read-token-file" : "--admin-token-file"
            return CommandError(.unauthorized, "\(what): \(why) (check --token-file against the collector's \(file))")
        case 400: return CommandError(.invalidArgument, "\(what): \(why)")
        case 429, 500...599: return CommandError(.unavailable, "\(what): \(why); retry later")
        default: return CommandError(.rejected, "\(what): \(why)")
        }
    }

    /// Text from the collector (or an error quoting it) as one printable line: at most 300
    /// characters, newlines as spaces, every other control or bidi character escaped.
    static func oneLine(_ error: Any) -> String {
        TerminalText.escaped(String("\(error)".replacingOccurrences(of: "\n", with: " ").prefix(300)))
    }
}
