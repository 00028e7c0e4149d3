import Testing

@testable import ConsoleAccess

/// Which POSTs come from the console's own pages, by their Origin or Referer.
@Suite struct OriginCheckTests {
    @Test func theOwnOriginIsAllowedAndOthersAreNot() throws {
        let check = try OriginCheck(origins: ["https://console.example.com"])
        #expect(check.allows(originHeader: "https://console.example.com", refererHeader: nil))
        #expect(check.allows(originHeader: "HTTPS://Console.Example.COM", refererHeader: nil))
        #expect(check.allows(originHeader: "https://console.example.com:443", refererHeader: nil))
        for origin in [
            "https://evil.example.com", "http://console.example.com", "https://console.example.com:8443",
            "https://console.example.com.evil.example", "https://evil.example/https://console.example.com", "null", "",
            "https://console.example.com/path", "https://console.example.com https://evil.example",
            "https://user@console.example.com", "file://console.example.com", "console.example.com",
        ] {
            #expect(!check.allows(originHeader: origin, refererHeader: "https://console.example.com/fleet"), "\(origin)")
        }
    }

    @Test func aMissingOriginFallsBackOnTheReferer() throws {
        let check = try OriginCheck(origins: ["https://console.example.com"])
        #expect(check.allows(originHeader: nil, refererHeader: "https://console.example.com/apps/notes?channel=stable"))
        #expect(!check.allows(originHeader: nil, refererHeader: "https://evil.example.com/https://console.example.com/"))
        #expect(!check.allows(originHeader: nil, refererHeader: "null"))
        #expect(!check.allows(originHeader: nil, refererHeader: ""))
        #expect(!check.allows(originHeader: nil, refererHeader: nil), "neither header: refused")
    }

    @Test func aLoopbackConsoleAllowsItsLoopbackNames() throws {
        let check = try OriginCheck(listeningOn: "127.0.0.1", port: 8090, tls: false)
        #expect(check.allows(originHeader: "http://127.0.0.1:8090", refererHeader: nil))
        #expect(check.allows(originHeader: "http://localhost:8090", refererHeader: nil))
        #expect(check.allows(originHeader: "http://[::1]:8090", refererHeader: nil))
        #expect(!check.allows(originHeader: "http://127.0.0.1:8091", refererHeader: nil), "another port is another origin")
        #expect(!check.allows(originHeader: "https://127.0.0.1:8090", refererHeader: nil))
    }

    @Test func aPublicURLIsAllowedBesideTheListenAddress() throws {
        let check = try OriginCheck(listeningOn: "10.1.2.3", port: 8090, tls: false, publicURL: "https://console.example.com/")
        #expect(check.allows(originHeader: "https://console.example.com", refererHeader: nil))
        #expect(check.allows(originHeader: "http://10.1.2.3:8090", refererHeader: nil))
        #expect(!check.allows(originHeader: "http://console.example.com", refererHeader: nil))
        let v6 = try OriginCheck(listeningOn: "2001:db8::5", port: 443, tls: true)
        #expect(v6.allows(originHeader: "https://[2001:db8::5]", refererHeader: nil), "\(v6.origins)")
    }

    @Test func everyAddressNeedsAPublicURLAndBadOnesAreRefused() throws {
        let wildcard = #expect(throws: ConsoleAccessError.self) { try OriginCheck(listeningOn: "0.0.0.0", port: 8090, tls: false) }
        #expect(wildcard?.message.contains("--public-url") == true)
        let any = try OriginCheck(listeningOn: "0.0.0.0", port: 8090, tls: false, publicURL: "https://ops.example.com")
        #expect(any.origins == ["https://ops.example.com"])
        for bad in ["ops.example.com", "ftp://ops.example.com", "https://", "https://user:pw@ops.example.com", "https://ops.example.com:99999"] {
            #expect(throws: ConsoleAccessError.self, "\(bad)") { try OriginCheck(origins: [bad]) }
        }
        #expect(throws: ConsoleAccessError.self) { try OriginCheck(origins: []) }
    }
}
