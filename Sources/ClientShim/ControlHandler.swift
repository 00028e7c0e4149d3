import ClientFoundation
import Foundation

/// What the shim's `serve` backend asks of the device agent: the control endpoints under
/// `/__clientctl/` are routed to one of these (the updater implements it).
///
/// Every method may be called concurrently from several requests.
public protocol ControlHandler: Sendable {
    /// `POST /__clientctl/startup-complete`: the page finished starting (commits a trial).
    func startupDidComplete() async throws -> ControlStatus
    /// `POST /__clientctl/check`: check for updates now; the result arrives as events.
    func checkForUpdates() async throws -> ControlStatus
    /// `POST /__clientctl/switch-to-pending`: make the pending version current; the page
    /// reloads next. Throws when there is no pending version.
    func switchToPendingVersion() async throws -> ControlStatus
    /// `POST /__clientctl/startup-complete` from a page that names the version it was
    /// served with (`nil` when it names none): a version other than the one on trial
    /// throws `UpdaterError` `.conflict` and leaves the trial alone.
    func startupDidComplete(version: String?) async throws -> ControlStatus
    /// `POST /__clientctl/check` from a page of `version`.
    func checkForUpdates(version: String?) async throws -> ControlStatus
    /// `POST /__clientctl/switch-to-pending` from a page of `version`: a page of another
    /// version than the one served throws `UpdaterError` `.conflict`.
    func switchToPendingVersion(version: String?) async throws -> ControlStatus
    /// `GET /__clientctl/status`.
    func status() async throws -> ControlStatus
    /// `GET /__clientctl/events`: a new stream for one subscriber; finishing it ends the
    /// server-sent event stream.
    func events() async -> AsyncStream<ControlEvent>
    /// `POST /__clientctl/activity`: the user did something on a page of `version` (the
    /// shim sends at most one every few seconds); idle time starts again.
    func userActivity(version: String?) async
    /// `POST /__clientctl/hold`: the page holds the switch to a staged version back for
    /// `duration` (zero: lets go) under its `lease`; returns when the lease ends.
    func holdUpdate(lease: String, for duration: Duration, version: String?) async throws -> Date
    /// `POST /__clientctl/hold-downloads`: `lease` holds the device's downloads back for
    /// `duration` (zero: lets go): a download in flight stops, keeping what it has, and none
    /// starts until the lease ends (docs/download-policy.md#holds). Returns when it ends.
    func holdDownloads(lease: String, for duration: Duration, version: String?) async throws -> Date
    /// A top-level navigation of the page is about to be answered (`Sec-Fetch-Mode:
    /// navigate`, `Sec-Fetch-Dest: document`): a staged version that waits for it takes
    /// over first, so the navigation gets it.
    func pageNavigates() async
    /// `GET /__clientctl/channel`: the channel the device follows and those its trust root
    /// lets it choose (docs/targeting.md#choosing-a-channel).
    func channels() async throws -> ControlChannels
    /// `POST /__clientctl/set-channel`: the page chooses the channel the device follows
    /// from its next check, under the same rule as `clientctl channel set`. A channel the
    /// trust root does not list throws an error of kind `notPermitted` and changes nothing.
    func setChannel(_ name: String, version: String?) async throws -> ControlChannels
    /// `POST /__clientctl/problems`: a page of `version` had `errors` uncaught errors and
    /// unhandled rejections since its last report, a few of their `messages`, and reported
    /// its own problems of `appKinds` (`reportProblem(kind)`, docs/page-errors.md). A kind
    /// that is not a word throws an error of kind `usage`, naming why.
    func pageProblems(errors: Int64, messages: [String], appKinds: [String], version: String?) async throws
}

extension ControlHandler {
    /// Handlers that do not look at the page's version answer as for a page naming none.
    public func startupDidComplete(version: String?) async throws -> ControlStatus { try await startupDidComplete() }
    public func checkForUpdates(version: String?) async throws -> ControlStatus { try await checkForUpdates() }
    public func switchToPendingVersion(version: String?) async throws -> ControlStatus { try await switchToPendingVersion() }
    /// Handlers without an apply driver ignore activity.
    public func userActivity(version: String?) async {}
    /// Handlers without an apply driver hold nothing: the lease ends at once.
    public func holdUpdate(lease: String, for duration: Duration, version: String?) async throws -> Date { Date() }
    /// Handlers without download holds hold nothing: the lease ends at once.
    public func holdDownloads(lease: String, for duration: Duration, version: String?) async throws -> Date { Date() }
    /// Handlers without an apply driver switch nothing on a navigation.
    public func pageNavigates() async {}
    /// Handlers of roots without channels to choose answer ``ControlChannelsUnavailable``.
    public func channels() async throws -> ControlChannels { throw ControlChannelsUnavailable() }
    /// Handlers of roots without channels to choose answer ``ControlChannelsUnavailable``.
    public func setChannel(_ name: String, version: String?) async throws -> ControlChannels { throw ControlChannelsUnavailable() }
    /// Handlers without a count of the page's problems ignore them.
    public func pageProblems(errors: Int64, messages: [String], appKinds: [String], version: String?) async throws {}
}

/// The channel a device follows and those it may choose (`GET /__clientctl/channel`, the
/// answer of `set-channel`, the value of `getChannel()` and `setChannel(name)`).
public struct ControlChannels: Codable, Sendable, Equatable {
    /// The channel the device follows (from its next check, when just chosen).
    public var channel: String
    /// Every channel the device's trust root lets it follow, sorted.
    public var choosable: [String]
    /// The trust root's own channel, which the device follows unless another is chosen.
    public var rootChannel: String
    /// Why the device does not follow the channel chosen on it; absent when it does.
    public var note: String?

    public init(channel: String, choosable: [String], rootChannel: String, note: String? = nil) {
        self.channel = channel
        self.choosable = choosable
        self.rootChannel = rootChannel
        self.note = note
    }
}

/// What a handler whose root has no channels to choose (a Meteor root, a test host)
/// throws from ``ControlHandler/channels()`` and ``ControlHandler/setChannel(_:version:)``.
public struct ControlChannelsUnavailable: ClientctlError {
    public init() {}
    public var message: String { "this device has no channels to choose" }
    public var kind: FailureKind { .config }
    public var underlying: (any Error & Sendable)? { nil }
}

/// The state the shim sees (`GET /__clientctl/status` and the body of every POST).
public struct ControlStatus: Codable, Sendable, Equatable {
    /// The version being served.
    public var current: String?
    /// A version downloaded and ready for `switchToPendingVersion`.
    public var pending: String?
    /// The last version that completed start-up.
    public var lastKnownGood: String?
    /// True while the current version is on trial (before `startupDidComplete`).
    public var inTrial: Bool
    /// True when the pending version's apply policy lets this page switch to it now
    /// (docs/apply-policies.md#serve): the shim then calls `switch-to-pending` and reloads.
    /// Absent otherwise.
    public var switchNow: Bool?

    public init(current: String? = nil, pending: String? = nil, lastKnownGood: String? = nil, inTrial: Bool = false) {
        self.current = current
        self.pending = pending
        self.lastKnownGood = lastKnownGood
        self.inTrial = inTrial
    }
}

/// An event pushed to pages over `/__clientctl/events`.
public enum ControlEvent: Sendable, Equatable {
    /// A new version is pending (Cordova `onNewVersionReady(version)`).
    case updateAvailable(version: String)
    /// An update failed (Cordova `onError(error)`).
    case error(message: String)
    /// Download progress of a version: bytes so far and expected total when known.
    case downloadProgress(version: String, completed: Int64, total: Int64?)
    /// The watchdog rolled the device back to `to`: open pages still show the failed
    /// version and must reload now. Its payload names the version (`"embedded"` for the seed).
    case reload(to: RunningVersion)

    /// The SSE event name.
    public var name: String {
        switch self {
        case .updateAvailable: return "updateAvailable"
        case .error: return "error"
        case .downloadProgress: return "downloadProgress"
        case .reload: return "reload"
        }
    }

    /// The SSE `data:` payload, one line of JSON.
    public var jsonPayload: String {
        var object: [String: Any] = [:]
        switch self {
        case .updateAvailable(let version): object["version"] = version
        case .reload(let target): object["version"] = target.description
        case .error(let message): object["message"] = message
        case .downloadProgress(let version, let completed, let total):
            object["version"] = version
            object["completed"] = completed
            if let total { object["total"] = total }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
