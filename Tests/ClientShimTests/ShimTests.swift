import ClientShim
import Foundation
import TestSupport
import Testing

/// The page side of the control protocol, without a server: what the injected element
/// carries, what it refuses to carry, and the event payloads pages parse.
@Suite struct ShimTests {
    /// The JSON config the element passes to the shim's function: `…)({…});</script>`.
    static func config(_ element: String) throws -> [String: String] {
        let call = try #require(element.range(of: ")({", options: .backwards))
        let json = element[element.index(before: call.upperBound)...].dropLast(");</script>".count)
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        return try #require(object as? [String: String], "\(json)")
    }

    @Test(arguments: Shim.Backend.allCases)
    func everyElementIsMarkedWithItsBackendAndClosesOnce(backend: Shim.Backend) throws {
        let element = Shim(backend: backend).scriptElement(version: "1.2.3")
        #expect(element.hasPrefix("<script \(Shim.marker)=\"\(backend.rawValue)\">"))
        #expect(element.components(separatedBy: "</script>").count == 2, "one closing tag, at the end")
        #expect(
            try Self.config(element) == ["backend": backend.rawValue, "plugin": "WebAppLocalServer", "base": "/__clientctl/", "version": "1.2.3"])
    }

    /// A version the page could be tricked into carrying (a hostile manifest's) never
    /// reaches the page's script: the element names no version then.
    @Test(arguments: ["1.0.0</script><script>alert(1)</script>", "1.0.0\"};alert(1);//", "", String(repeating: "1", count: 129)])
    func aVersionOutsideTheVersionAlphabetIsLeftOut(version: String) throws {
        let element = Shim().scriptElement(version: version)
        #expect(try Self.config(element)["version"] == nil)
        #expect(!element.contains("alert"))
    }

    @Test(arguments: ["1.0.0", "2.0.0-rc.1+build.7", "meteor_version-3"])
    func plainVersionsAreKept(version: String) throws {
        #expect(try Self.config(Shim().scriptElement(version: version))["version"] == version)
    }

    @Test func aPluginNameKeepsOnlyIdentifierCharacters() throws {
        let element = Shim(backend: .capacitor, pluginName: "Updater\"];alert(1);//</script>").scriptElement
        #expect(try Self.config(element)["plugin"] == "Updateralert1script")
    }

    @Test func eventPayloadsAreOneLineOfJSON() throws {
        let events: [(ControlEvent, String, [String: String])] = [
            (.updateAvailable(version: "1.1.0"), "updateAvailable", ["version": "1.1.0"]),
            (.error(message: "no space left\n\"quoted\" </script>"), "error", ["message": "no space left\n\"quoted\" </script>"]),
            (
                .downloadProgress(version: "2.0.0", completed: 10, total: 300), "downloadProgress",
                ["version": "2.0.0", "completed": "10", "total": "300"]
            ),
            (.downloadProgress(version: "2.0.0", completed: 10, total: nil), "downloadProgress", ["version": "2.0.0", "completed": "10"]),
            (.reload(to: .installed("1.0.0")), "reload", ["version": "1.0.0"]),
            (.reload(to: .embedded), "reload", ["version": "embedded"]),
        ]
        for (event, name, fields) in events {
            #expect(event.name == name)
            #expect(!event.jsonPayload.contains("\n"), "an SSE data line must not break: \(event.jsonPayload)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(event.jsonPayload.utf8)) as? [String: Any])
            #expect(object.mapValues { "\($0)" } == fields)
        }
    }

    @Test func onlyStatusEventsAndTheChannelAreReads() {
        for endpoint in ControlEndpoint.allCases {
            #expect(endpoint.path == "/__clientctl/" + endpoint.rawValue)
            #expect(endpoint.method == ([.status, .events, .channel].contains(endpoint) ? "GET" : "POST"), "\(endpoint)")
        }
    }
}
