import Testing

@testable import ServingCore

/// The request-path rule of `serve`: what a path decodes to, and what can name no file.
@Suite struct PathRulesTests {
    @Test(arguments: [
        ("/app/main.js", "/app/main.js"),
        ("/caf%C3%A9.txt", "/caf\u{E9}.txt"),
        ("/a%20b", "/a b"),
        ("/.well-known/x", "/.well-known/x"),
    ])
    func decodes(_ raw: String, _ expected: String) {
        #expect(PathRules.decodedPath(raw) == expected)
    }

    /// `rrr\0\0\0` is the request-head fuzz target's finding (Fuzz/Regressions/request-head):
    /// a raw NUL passed because only decoded paths were checked.
    /// `%2e%2e/etcb` is the fuzz target's second finding: no leading `/`, so no `/.` to look for.
    @Test(arguments: ["%2e%2e/etcb", "../x", "x", "rrr\0\0\0", "/a\0b", "/a%00b", "/%2e%2e/etc/passwd", "/a/./b", "/a/../b", "/%2E/x", "/bad%zz"])
    func refuses(_ raw: String) {
        #expect(PathRules.decodedPath(raw) == nil, "\(raw.debugDescription)")
    }
}

/// Entity-tag matching for `If-None-Match` and `If-Range`, on bytes.
@Suite struct EntityTagMatchingTests {
    /// `"\u{738}GG-"` is the request-head fuzz target's finding
    /// (Fuzz/Regressions/request-head): a combining mark joined the opening quote into one
    /// `Character`, so the tag did not match itself.
    @Test(arguments: ["\"abc\"", "\"\u{738}GG-\"", "\"e\u{301}\"", "\"\u{E9}\""])
    func aTagMatchesItself(_ etag: String) {
        #expect(FileResponder.matches(etag, etag))
        #expect(FileResponder.matches("W/" + etag, etag))
        #expect(FileResponder.matches("\"x\", " + etag, etag))
        #expect(FileResponder.ifRangeAllows(" " + etag + " ", etag: etag))
    }

    @Test func canonicallyEquivalentSpellingsAreOtherTags() {
        #expect(!FileResponder.matches("\"e\u{301}\"", "\"\u{E9}\""))
        #expect(!FileResponder.ifRangeAllows("\"e\u{301}\"", etag: "\"\u{E9}\""))
        #expect(FileResponder.matches("*", "\"anything\""))
        #expect(!FileResponder.matches("\"abc\"", "\"abd\""))
    }
}
