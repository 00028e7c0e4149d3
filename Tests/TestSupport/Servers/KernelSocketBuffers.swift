import Foundation

/// What the kernel lets a TCP connection hold in flight, for tests that bound how far a
/// server gets ahead of a reader that stopped. Linux grows a socket's receive buffer up to
/// `tcp_rmem`'s maximum on a fast connection and its send buffer up to `tcp_wmem`'s
/// (tcp(7)); both are host settings (6 MiB and 4 MiB by long default, 32 MiB of receive
/// buffer on newer hosts), so a fixed bound holds on one machine and fails on another.
public enum KernelSocketBuffers {
    /// What AsyncHTTPClient reads ahead of a consumer that stopped taking chunks: a few
    /// chunks in its channel pipeline, far below this allowance.
    public static let clientReadAhead: Int64 = 4 << 20

    /// The largest receive buffer plus the largest send buffer a TCP socket may grow to,
    /// from /proc/sys/net/ipv4/tcp_rmem and tcp_wmem (min, default, max).
    /// - Throws: ``HarnessError`` when either file cannot be read as three numbers.
    public static func ceiling() throws -> Int64 {
        try ["tcp_rmem", "tcp_wmem"].reduce(0) { total, name in
            let path = "/proc/sys/net/ipv4/" + name
            let fields = try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isWhitespace)
            guard fields.count == 3, let max = Int64(fields[2]) else { throw HarnessError("\(path): not three numbers") }
            return total + max
        }
    }

    /// How many bytes a server may get ahead of an AsyncHTTPClient reader that stopped:
    /// the kernel's ``ceiling()`` plus ``clientReadAhead``. A test that checks a bound on
    /// bytes in flight offers a body several times this, so a reader that kept reading
    /// (or a transport that buffered the body) still fails it on any host.
    public static func inFlightBound() throws -> Int64 {
        try ceiling() + clientReadAhead
    }
}
