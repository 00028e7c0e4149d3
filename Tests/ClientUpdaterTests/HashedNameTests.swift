import ClientUpdater
import Testing

/// The one table for ``HashedName``: names today's bundlers emit are hashed (served
/// immutable); plain names are not (served no-cache). The Vite and Rollup names are those
/// of a real Vite build (Rollup's default `[name]-[hash]` / `[name].[hash]`, an 8-character
/// base64url hash that may hold `_` and `-`).
@Suite struct HashedNameTests {
    static let table: [(name: String, hashed: Bool, origin: String)] = [
        ("assets/index-B2x9Kq1z.js", true, "Vite entry chunk"),
        ("assets/index.DormvYxC.js", true, "Vite, hash of letters only"),
        ("assets/opacities.Blb4Ho7_.js", true, "Rollup, `_` in the hash"),
        ("assets/index-B-x9Kq1z.js", true, "Rollup, `-` in the hash"),
        ("assets/index-B2x9Kq1z.css", true, "Vite stylesheet"),
        ("assets/index-B2x9Kq1z.js.map", true, "its source map"),
        ("static/js/main.3f62a1b9.chunk.js", true, "webpack [contenthash:8].chunk"),
        ("app-0123456789abcdef0123.js", true, "webpack 20-hex contenthash"),
        ("chunk-ABCD1234.js", true, "esbuild"),
        ("img/logo.5d41402a.png", true, "hashed asset"),
        ("index.html", false, "the page itself"),
        ("app.js", false, "plain script"),
        ("style-settings.css", false, "a word after a dash"),
        ("logo-darkMode.svg", false, "camel-case word"),
        ("icons/Settings.svg", false, "capitalised word"),
        ("jquery-3.7.1.min.js", false, "a library's version"),
        ("MyComponent.js", false, "component name"),
        ("vendor.bundle.js", false, "bundle name"),
        ("a1b2c3d4", false, "no extension and nothing before the hash"),
        (".env", false, "dot file"),
    ]

    @Test(arguments: table.indices)
    func hashedNames(_ i: Int) {
        let row = Self.table[i]
        #expect(HashedName.looksHashed(row.name) == row.hashed, "\(row.name) (\(row.origin))")
    }

    @Test func sha1RunsInPaths() {
        let sha1 = String(repeating: "a1", count: 20)
        #expect(HashedName.containsSHA1Hex("/app.js?" + sha1))
        #expect(HashedName.containsSHA1Hex("/" + sha1 + ".map"))
        #expect(!HashedName.containsSHA1Hex("/app.js?" + sha1.dropLast()))
    }
}
