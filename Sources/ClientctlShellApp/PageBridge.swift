import ClientShim
import ClientUpdater
import Foundation

/// The page ↔ engine bridge in-process: the shim's `webkit` backend posts
/// `{action, version}` to `window.webkit.messageHandlers.clientctl` and gets the engine's
/// status back as the promise's value (docs/native-shell.md#the-bridge). Every call is
/// bound to the version the shell served the page with, not the one the page names: an
/// old page cannot acknowledge a new version, as with `serve`.
struct PageBridge: Sendable {
    static let handlerName = "clientctl"
    let control: UpdaterControl
    /// Called once per page load when the page painted its first frame.
    let onFirstPaint: @Sendable () -> Void
    /// Called after an acknowledgement the engine accepted: the page's version and the page
    /// load it came from (``ShellView/loadGeneration``).
    let onAcknowledged: @Sendable (String?, Int) -> Void
    /// The page holds the switch to a staged version back for so many seconds (0: lets go);
    /// returns when the lease ends (docs/apply-policies.md#page-leases).
    let hold: @Sendable (Double) -> Date
    /// The page holds the device's downloads back for so many seconds (0: lets go); returns
    /// when the lease ends (docs/download-policy.md#holds).
    let holdDownloads: @Sendable (Double) -> Date
    /// The page's own problem of `kind` (`reportProblem(kind)`) for the page of a version
    /// (nil: the one the engine runs): counted, or an error naming why not
    /// (docs/page-errors.md).
    let reportProblem: @Sendable (_ kind: String, _ version: String?) async throws -> Void
    /// The page reads (nil) or chooses (a name) the channel the device follows
    /// (docs/targeting.md#choosing-a-channel): the rule of `clientctl channel set`.
    let channels: @Sendable (String?) async throws -> ControlChannels

    /// Posted by every page of the app after its first frame (two animation frames after
    /// the document loaded): the `firstPaint` event.
    static let firstPaintScript = """
        (function () {
          var h = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.clientctl;
          if (!h) return;
          requestAnimationFrame(function () { requestAnimationFrame(function () {
            try { h.postMessage({ action: "first-paint" }).catch(function () {}); } catch (e) {}
          }); });
        })();
        """

    /// Answers one message.
    func answer(_ message: BridgeMessage) async -> Result<String, BridgeRefusal> {
        let pageVersion = message.pageVersion
        if let claimed = message.version, claimed != pageVersion {
            return .failure(BridgeRefusal("this page names version \(claimed) but was served \(pageVersion ?? "no version")"))
        }
        do {
            let status: ControlStatus
            switch message.action {
            case "startup-complete":
                status = try await control.startupDidComplete(version: pageVersion)
                onAcknowledged(pageVersion, message.load)
            case "check": status = try await control.checkForUpdates(version: pageVersion)
            case "switch-to-pending": status = try await control.switchToPendingVersion(version: pageVersion)
            case "status": status = try await control.status()
            case "first-paint":
                onFirstPaint()
                return .success("{}")
            case "hold-update", "release-update":
                let seconds = message.action == "hold-update" ? (message.seconds ?? 0) : 0
                guard seconds.isFinite, seconds >= 0 else { return .failure(BridgeRefusal("holdUpdate takes a number of seconds, 0 or more")) }
                let until = hold(seconds)
                return .success("{\"until\":\(Self.jsString(Self.iso8601(until)))}")
            case "hold-downloads":
                let seconds = message.seconds ?? 0
                guard seconds.isFinite, seconds >= 0 else { return .failure(BridgeRefusal("holdDownloads takes a number of seconds, 0 or more")) }
                return .success("{\"until\":\(Self.jsString(Self.iso8601(holdDownloads(seconds))))}")
            case "report-problem":
                guard let kind = message.kind else { return .failure(BridgeRefusal("reportProblem takes a kind")) }
                try await reportProblem(kind, pageVersion)
                return .success("{}")
            case "channel", "set-channel":
                if message.action == "set-channel", message.channel == nil {
                    return .failure(BridgeRefusal("setChannel takes a channel name"))
                }
                return .success(Self.json(try await channels(message.action == "set-channel" ? message.channel : nil)))
            case let other:
                return .failure(BridgeRefusal("unknown action \(other.map { "'\($0)'" } ?? "(none)")"))
            }
            return .success(Self.json(status))
        } catch {
            return .failure(BridgeRefusal("\(error)"))
        }
    }

    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func json<Value: Encodable>(_ status: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(status)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// A JavaScript string literal of `s` (JSON's quoting, which JS accepts).
    static func jsString(_ s: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}

/// One message from the page: what it asks, the version it names, and the version the
/// shell served it with (what the engine is told).
struct BridgeMessage: Sendable {
    var action: String?
    var version: String?
    var pageVersion: String?
    /// `holdUpdate(seconds)`'s or `holdDownloads(seconds)`'s number.
    var seconds: Double?
    /// `setChannel(name)`'s channel.
    var channel: String?
    /// `reportProblem(kind)`'s kind.
    var kind: String?
    /// The page load it came from (``ShellView/loadGeneration``).
    var load: Int

    /// Reads the page's `{action, version}` (JSON of the posted value).
    init(json: String, pageVersion: String?, load: Int) {
        let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        action = object["action"] as? String
        version = object["version"] as? String
        seconds = (object["seconds"] as? NSNumber)?.doubleValue
        channel = object["channel"] as? String
        kind = object["kind"] as? String
        self.pageVersion = pageVersion
        self.load = load
    }
}
