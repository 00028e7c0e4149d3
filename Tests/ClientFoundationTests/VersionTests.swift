import TestSupport
import Testing

@testable import ClientFoundation

@Suite struct VersionTests {
    @Test func specPrecedenceChain() throws {
        let chain = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
            "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "10.0.0",
        ]
        let versions = try chain.map { try #require(Version($0), "\($0) should parse") }
        for i in 0..<versions.count - 1 {
            #expect(versions[i] < versions[i + 1], "\(chain[i]) < \(chain[i + 1])")
            #expect(!(versions[i + 1] < versions[i]))
        }
        #expect(versions.shuffled().sorted() == versions)
    }

    @Test(arguments: [
        "v1.0.0", "01.0.0", "1.02.0", "1.0.03", "1.0", "1.0.0.0", "", "1..0", "1.0.0-", "1.0.0+",
        "1.0.0-01", "1.0.0-a..b", "1.0.0-alpha_1", "１.0.0", "1.0.0 ", " 1.0.0", "-1.0.0", "1.0.0-é",
        "99999999999999999999.0.0",
    ])
    func rejectsInvalid(_ text: String) {
        #expect(Version(text) == nil, "'\(text)' must be rejected")
    }

    @Test(arguments: [
        "0.0.0", "1.2.3", "1.0.0-0", "1.0.0-0a", "1.0.0-x-y.7.z.92", "1.0.0+20130313144700",
        "1.0.0-beta+exp.sha.5114f85", "1.0.0+21AF26D3----117B344092BD",
    ])
    func roundTrips(_ text: String) throws {
        let v = try #require(Version(text))
        #expect(v.description == text)
    }

    @Test func buildMetadataIgnoredForEqualityOrderingAndHashing() throws {
        let a = try #require(Version("1.0.0+build.1"))
        let b = try #require(Version("1.0.0+build.2"))
        #expect(a == b)
        #expect(!(a < b) && !(b < a))
        #expect(Set([a, b]).count == 1)
        #expect(a.hashValue == b.hashValue)
    }

    @Test func numericIdentifiersCompareNumerically() throws {
        #expect(try #require(Version("1.0.0-2")) < #require(Version("1.0.0-10")))
        #expect(try #require(Version("1.0.0-10")) < #require(Version("1.0.0-a")))
        #expect(try #require(Version("1.0.0-B")) < #require(Version("1.0.0-a")))  // ASCII order
    }
}
