/// The `/__clientctl/` endpoints of the shim's `serve` backend and the method each
/// accepts: the one table the shim's protocol, the server's router, its method check and
/// its shim-header check read.
public enum ControlEndpoint: String, CaseIterable, Sendable {
    case status
    case events
    case startupComplete = "startup-complete"
    case check
    case switchToPending = "switch-to-pending"
    /// The user did something on the page (docs/apply-policies.md#serve).
    case activity
    /// The page holds a switch back, or lets go (`holdUpdate(seconds)`).
    case hold
    /// The page (or a local process) holds the device's downloads back, or lets go
    /// (`holdDownloads(seconds)`, docs/download-policy.md#holds).
    case holdDownloads = "hold-downloads"
    /// The channel the device follows and those it may choose (`getChannel()`).
    case channel
    /// The page chooses the channel the device follows (`setChannel(name)`, for testers).
    case setChannel = "set-channel"
    /// The page's uncaught errors and unhandled rejections after its acknowledgement, and
    /// its own problems (`reportProblem(kind)`), coalesced by the shim (docs/page-errors.md).
    case problems

    /// Where the endpoints live on the page's own origin.
    public static let prefix = "/__clientctl/"
    /// The header every POST must carry (`X-Clientctl-Shim: 1`): a page from another
    /// origin cannot send it without a CORS preflight, which the server never grants.
    public static let shimHeaderName = "X-Clientctl-Shim"

    /// `GET` (status, the event stream) or `POST` (the actions).
    public var method: String {
        switch self {
        case .status, .events, .channel: return "GET"
        case .startupComplete, .check, .switchToPending, .activity, .hold, .holdDownloads, .setChannel, .problems: return "POST"
        }
    }

    /// `/__clientctl/<name>`.
    public var path: String { Self.prefix + rawValue }
}
