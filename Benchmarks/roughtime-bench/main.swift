// Driver of Scripts/bench/roughtime: the cost of authenticated time on loopback against
// real Roughtime servers (roughly from PyPI, started by the script). Prints one JSON object:
// per-step times of one query and of a quorum of all the servers given, in microseconds
// (median and 90th percentile of --rounds), the bytes on the wire, and the CPU cost of
// parsing and verifying one answer alone (no network).
//
// Usage: roughtime-bench --rounds N roughtime://HOST:PORT=BASE64KEY...
import AuthenticatedTime
import AuthenticatedTimeClient
import Foundation

var rounds = 50
var servers: [RoughtimeServer] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--rounds", let value = arguments.popFirst(), let n = Int(value) {
        rounds = n
    } else if let equals = argument.firstIndex(of: "=") {
        servers.append(try RoughtimeServer(address: String(argument[..<equals]), key: String(argument[argument.index(after: equals)...])))
    } else {
        FileHandle.standardError.write(Data("usage: roughtime-bench --rounds N roughtime://HOST:PORT=KEY...\n".utf8))
        exit(64)
    }
}
guard let first = servers.first else { exit(64) }

func micros(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func summary(_ samples: [Double]) -> [String: Double] {
    let sorted = samples.sorted()
    return ["median": sorted[sorted.count / 2], "p90": sorted[min(sorted.count - 1, sorted.count * 9 / 10)]]
}

let clock = ContinuousClock()
// Warm up: the first query opens NIO's event loop and OpenSSL.
_ = try await RoughtimeClient.query(first, timeout: .seconds(5))

var single: [Double] = []
var lastAnswer: RoughtimeAnswer?
for _ in 0..<rounds {
    let start = clock.now
    lastAnswer = try await RoughtimeClient.query(first, timeout: .seconds(5))
    single.append(micros(clock.now - start))
}

var quorum: [Double] = []
for _ in 0..<rounds {
    let start = clock.now
    _ = try await RoughtimeQuorum.query(servers, quorum: servers.count, timeout: .seconds(5))
    quorum.append(micros(clock.now - start))
}

// Verification alone: a fresh answer of the first server to a request of our own,
// obtained once over UDP by hand, then parsed and verified `rounds * 20` times.
let nonce = Roughtime.randomNonce()
let request = Roughtime.request(nonce: nonce, serverKey: first.publicKey)
let raw = try await rawAnswer(to: request, from: first)
var verify: [Double] = []
for _ in 0..<(rounds * 20) {
    let start = clock.now
    let parsed = try RoughtimeResponse.parse(raw)
    _ = try Roughtime.verify(parsed, request: request, longTermKey: first.publicKey)
    verify.append(micros(clock.now - start))
}

let result: [String: Any] = [
    "rounds": rounds, "servers": servers.count,
    "singleMicroseconds": summary(single), "quorumMicroseconds": summary(quorum), "verifyMicroseconds": summary(verify),
    "requestBytes": lastAnswer?.bytesSent ?? 0, "answerBytes": lastAnswer?.bytesReceived ?? 0,
]
print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))

/// One answer's bytes, by a plain blocking UDP socket (the bench's own, not the library's).
func rawAnswer(to request: [UInt8], from server: RoughtimeServer) async throws -> [UInt8] {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(server.port).bigEndian)
    inet_pton(AF_INET, server.host, &address.sin_addr)
    let sent = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            sendto(fd, request, request.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    var buffer = [UInt8](repeating: 0, count: 2048)
    let received = recv(fd, &buffer, buffer.count, 0)
    guard sent == request.count, received > 0 else {
        FileHandle.standardError.write(Data("roughtime-bench: no answer from \(server)\n".utf8))
        exit(1)
    }
    return Array(buffer.prefix(received))
}
