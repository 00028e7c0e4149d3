import ClientFoundation
import Foundation

/// How a loopback server (`clientctl serve`, the shell's loopback origin) listens and what it
/// adds to responses.
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to bind: loopback only (`127.0.0.1` by default).
    public var host: String
    /// The TCP port; 0 lets the system choose (tests).
    public var port: Int
    /// Sent as `Content-Security-Policy` on every file response when set.
    public var contentSecurityPolicy: String?
    /// Meteor roots: the shell's `www` folder holding the embedded bundle (its
    /// `application/` subfolder). Its other files (e.g. `/cordova_plugins.js`) are served
    /// when the current version has no such URL path; `/application/…` never is.
    public var wwwDirectory: String?
    /// Files up to this size are kept in memory once read (versions are immutable).
    public var memoryCacheFileLimit: Int
    /// Total bytes kept in memory per version.
    public var memoryCacheTotalLimit: Int
    /// The time between keep-alive comments on the event stream.
    public var eventHeartbeat: Duration
    /// How long a new connection has to send a complete request head (slowloris, silent clients).
    public var headerTimeout: Duration
    /// How long a keep-alive connection may wait for its next request.
    public var idleTimeout: Duration
    /// Most connections open at once; past it the server stops accepting until one closes
    /// (the kernel's backlog holds the rest). Default: half the descriptor limit, at most 512.
    public var maxConnections: Int
    /// Most event streams open at once (each also holds a connection).
    public var maxEventStreams: Int

    /// The timeouts `serve` accepts (a longer one would let idle clients pin descriptors).
    public static let timeoutRange: ClosedRange<Duration> = .milliseconds(100)...(.seconds(3600))

    public init(
        host: String = "127.0.0.1", port: Int, contentSecurityPolicy: String? = nil, wwwDirectory: String? = nil,
        memoryCacheFileLimit: Int = 1 << 20, memoryCacheTotalLimit: Int = 64 << 20, eventHeartbeat: Duration = .seconds(15),
        headerTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(30),
        maxConnections: Int = ServerConfiguration.defaultMaxConnections(), maxEventStreams: Int = 64
    ) {
        self.host = host
        self.port = port
        self.contentSecurityPolicy = contentSecurityPolicy
        self.wwwDirectory = wwwDirectory
        self.memoryCacheFileLimit = memoryCacheFileLimit
        self.memoryCacheTotalLimit = memoryCacheTotalLimit
        self.eventHeartbeat = eventHeartbeat
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxEventStreams = maxEventStreams
    }

    /// Half the process's open-file limit (the rest is for files, the root and the
    /// listener), between 16 and 512.
    public static func defaultMaxConnections() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 256 }
        let half = Int(min(limit.rlim_cur / 2, 512))
        return max(16, half)
    }

    /// The lowest and highest port ``derivedPort(forApp:)`` returns.
    public static let derivedPortRange: ClosedRange<Int> = 12000...13000

    /// The port for an app id when none is given: `12000 + (n mod 1001)` where `n` is the
    /// first four bytes (big-endian) of SHA-256 over the app id's UTF-8 bytes. Stable
    /// across runs and machines, so the web view's origin (and its storage) survives
    /// restarts.
    public static func derivedPort(forApp app: String) -> Int {
        let hex = Digest.hex(.sha256, of: Data(app.utf8))
        let n = UInt32(hex.prefix(8), radix: 16) ?? 0
        return derivedPortRange.lowerBound + Int(n % UInt32(derivedPortRange.count))
    }
}
