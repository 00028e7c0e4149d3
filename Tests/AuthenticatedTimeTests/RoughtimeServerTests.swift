import Testing

@testable import AuthenticatedTime

/// Server names as `init --time-server roughtime://HOST:PORT --time-server-key KEY` takes them.
@Suite struct RoughtimeServerTests {
    static let base64Key = "RdptPNVRG10TEPABP/iIDMz/UhPGWpm6J9mYdf1/N5k="

    @Test func addressAndBase64OrHexKey() throws {
        let server = try RoughtimeServer(address: "roughtime://127.0.0.1:2002", key: Self.base64Key)
        #expect(server.host == "127.0.0.1" && server.port == 2002 && server.publicKey == RecordedVector.publicKey)
        #expect(server.description == "roughtime://127.0.0.1:2002")
        let hex = RecordedVector.publicKey.map { String(format: "%02x", $0) }.joined()
        #expect(try RoughtimeServer(address: "roughtime://time.example:5319", key: hex).publicKey == RecordedVector.publicKey)
        #expect(try RoughtimeServer(address: "roughtime://time.example:5319", key: hex.uppercased()).publicKey == RecordedVector.publicKey)
        let six = try RoughtimeServer(address: "roughtime://[::1]:5319", key: Self.base64Key)
        #expect(six.host == "::1" && six.description == "roughtime://[::1]:5319")
    }

    @Test(arguments: [
        ("http://127.0.0.1:2002", base64Key, "not roughtime://HOST:PORT"),
        ("roughtime://127.0.0.1", base64Key, "no port"),
        ("roughtime://127.0.0.1:0", base64Key, "is not 1 to 65535"),
        ("roughtime://127.0.0.1:70000", base64Key, "is not 1 to 65535"),
        ("roughtime://:2002", base64Key, "not a host name or address"),
        ("roughtime://a b:2002", base64Key, "not a host name or address"),
        ("roughtime://[::1]2002", base64Key, "[ADDRESS]:PORT"),
        ("roughtime://127.0.0.1:2002", "AAAA", "not a 32-byte Ed25519 public key"),
        ("roughtime://127.0.0.1:2002", String(repeating: "zz", count: 32), "not a 32-byte Ed25519 public key"),
        // Fullwidth digits are hex digits to `Character.isHexDigit`, not to the one hex rule.
        ("roughtime://127.0.0.1:2002", String(repeating: "\u{FF11}", count: 64), "not a 32-byte Ed25519 public key"),
    ])
    func badNamesAreConfigurationErrors(address: String, key: String, says: String) {
        let error = #expect(throws: AuthenticatedTimeError.self) { try RoughtimeServer(address: address, key: key) }
        #expect(error?.code == .invalidServer)
        #expect(error?.kind == .config)
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
    }
}
