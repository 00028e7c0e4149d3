import ClientServer
import Foundation
import TestSupport
import Testing

/// `serve`'s router: a request to upgrade (a WebSocket handshake) closes its connection.
@Suite struct UpgradeCloseTests {
    /// A WebSocket handshake gets an answer and `Connection: close`: SwiftNIO reads no
    /// further request on that connection, and WebKitGTK would send one there.
    @Test func aRequestToUpgradeClosesItsConnection() async throws {
        let root = try ArchiveRoot.standard()
        let server = try ClientServer(configuration: ServerHarness.configuration(), logger: ServerHarness.quietLogger)
        try server.activate(servingDirectory: root.serving("1.0.0"))
        try await ServerHarness.withServer(server) { port in
            let handshake = """
                GET /socket HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
                Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n
                """
            let answer = try await LoopbackHTTP.offload { () -> String in
                let fd = try LoopbackHTTP.connect(port: port)
                defer { close(fd) }
                try LoopbackHTTP.send(fd, handshake)
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 65536)
                while !String(decoding: data, as: UTF8.self).contains("\r\n\r\n") {
                    let n = read(fd, &buffer, buffer.count)
                    guard n > 0 else { break }
                    data.append(contentsOf: buffer[0..<n])
                }
                return String(decoding: data, as: UTF8.self)
            }
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            #expect(answer.lowercased().contains("\r\nconnection: close\r\n"), "\(answer.prefix(400))")
            let refused = try await LoopbackHTTP.raw(port: port, "GET / HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\n")
            #expect(refused.status == 421 && refused["connection"] == "close", "refusals close too")
        }
    }
}
