import ClientFoundation
import DeviceIdentity
import Foundation
import Testing

/// Device labels: the key and value grammar with every refusal's message, `KEY=VALUE` texts, the
/// 32-label bound, the collection API and the plain JSON object they encode as.
@Suite struct DeviceLabelsTests {
    static let keyCharacters = "(allowed: lowercase letters, digits and . _ -)"
    static let valueCharacters = "(allowed: letters, digits and . _ - : / + @)"

    static let goodKeys = [
        "a", "z9", "store", "a1", "a.b_c-d", "ids", "identity", "android", "notes", "cohorts", "idx",
        String(repeating: "k", count: 63),
    ]

    @Test(arguments: goodKeys)
    func aKeyOfTheGrammarHasNoProblem(key: String) {
        #expect(DeviceLabels.keyProblem(key) == nil)
    }

    static let badKeys: [(String, String)] = [
        ("", "is empty"),
        (String(repeating: "k", count: 64), "is 64 characters, at most 63"),
        (String(repeating: "k", count: 100), "is 100 characters, at most 63"),
        ("Store", "must start with a lowercase letter"),
        ("1a", "must start with a lowercase letter"),
        ("_a", "must start with a lowercase letter"),
        ("-a", "must start with a lowercase letter"),
        (".a", "must start with a lowercase letter"),
        ("é", "must start with a lowercase letter"),
        (" a", "must start with a lowercase letter"),
        ("a b", "has the character ' ' \(keyCharacters)"),
        ("aB", "has the character 'B' \(keyCharacters)"),
        ("a:b", "has the character ':' \(keyCharacters)"),
        ("a=b", "has the character '=' \(keyCharacters)"),
        ("a/b", "has the character '/' \(keyCharacters)"),
        ("a\tb", #"has the character '\u{9}' "# + keyCharacters),
        ("aé", "has the character 'é' \(keyCharacters)"),
        ("id", "is reserved by the target language"),
        ("cohort", "is reserved by the target language"),
        ("and", "is reserved by the target language"),
        ("or", "is reserved by the target language"),
        ("not", "is reserved by the target language"),
        ("in", "is reserved by the target language"),
        ("true", "is reserved by the target language"),
        ("false", "is reserved by the target language"),
    ]

    @Test(arguments: badKeys)
    func aKeyOffTheGrammarIsRefusedSayingWhy(key: String, problem: String) {
        #expect(DeviceLabels.keyProblem(key) == problem)
    }

    static let goodValues = [
        "1", "12", "Beta", "a.b_c-d:e/f+g@h", "AND", "not", "0123456789abcdef0123456789abcdef",
        String(repeating: "v", count: 64),
    ]

    @Test(arguments: goodValues)
    func aValueOfTheGrammarHasNoProblem(value: String) {
        #expect(DeviceLabels.valueProblem(value) == nil)
    }

    static let badValues: [(String, String)] = [
        ("", "is empty"),
        (String(repeating: "v", count: 65), "is 65 characters, at most 64"),
        ("a b", "has the character ' ' \(valueCharacters)"),
        ("a=b", "has the character '=' \(valueCharacters)"),
        ("a,b", "has the character ',' \(valueCharacters)"),
        ("(12)", "has the character '(' \(valueCharacters)"),
        ("a!", "has the character '!' \(valueCharacters)"),
        ("a#b", "has the character '#' \(valueCharacters)"),
        ("café", "has the character 'é' \(valueCharacters)"),
        ("a\u{0}", #"has the character '\u{0}' "# + valueCharacters),
        ("a\u{202E}b", #"has the character '\u{202e}' "# + valueCharacters),
    ]

    @Test(arguments: badValues)
    func aValueOffTheGrammarIsRefusedSayingWhy(value: String, problem: String) {
        #expect(DeviceLabels.valueProblem(value) == problem)
    }

    static let assignments: [(String, String, String)] = [
        ("store=12", "store", "12"),
        ("ring=beta", "ring", "beta"),
        ("a.b_c-d=x:y/z+w@V", "a.b_c-d", "x:y/z+w@V"),
    ]

    @Test(arguments: assignments)
    func anAssignmentSplitsAtItsEquals(text: String, key: String, value: String) throws {
        let parsed = try DeviceLabels.parseAssignment(text)
        #expect(parsed.key == key)
        #expect(parsed.value == value)
    }

    static let badAssignments: [(String, String)] = [
        ("store 12", "label 'store 12': expected KEY=VALUE"),
        ("", "label '': expected KEY=VALUE"),
        ("store", "label 'store': expected KEY=VALUE"),
        ("a=b=c", "label 'a=b=c': expected KEY=VALUE"),
        ("a\nb", #"label 'a\u{a}b': expected KEY=VALUE"#),
        (String(repeating: "s", count: 70), "label '\(String(repeating: "s", count: 64))…': expected KEY=VALUE"),
        ("=12", "label key '': is empty"),
        ("store=", "label value '': is empty"),
        ("Store=12", "label key 'Store': must start with a lowercase letter"),
        ("id=1", "label key 'id': is reserved by the target language"),
        ("st ore=1", "label key 'st ore': has the character ' ' \(keyCharacters)"),
        ("store=1 2", "label value '1 2': has the character ' ' \(valueCharacters)"),
        (
            String(repeating: "k", count: 64) + "=1",
            "label key '\(String(repeating: "k", count: 64))': is 64 characters, at most 63"
        ),
        (
            "store=" + String(repeating: "v", count: 65),
            "label value '\(String(repeating: "v", count: 64))…': is 65 characters, at most 64"
        ),
    ]

    @Test(arguments: badAssignments)
    func aBadAssignmentIsRefusedInOneLineQuotingIt(text: String, message: String) {
        let error = #expect(throws: DeviceIdentityError.self) { try DeviceLabels.parseAssignment(text) }
        #expect(error?.message == message)
        #expect(error?.code == .invalidLabel)
        #expect(error?.kind == .usage)
        #expect(error?.message.contains("\n") == false)
    }

    /// `--label` flags and `clientctl label set`: each key once, in DeviceIdentity's error.
    @Test func assignmentsGiveLabelsWithEachKeyOnce() throws {
        #expect(try DeviceLabels(assignments: ["store=12", "ring=beta"]).description == "ring=beta,store=12")
        #expect(try DeviceLabels(assignments: []).isEmpty)
        let twice = #expect(throws: DeviceIdentityError.self) { try DeviceLabels(assignments: ["store=12", "store=14"]) }
        #expect(twice?.message == "label 'store' is given twice: a device has one value per key")
        #expect(twice?.code == .invalidLabel && twice?.kind == .usage)
        let bad = #expect(throws: DeviceIdentityError.self) { try DeviceLabels(assignments: ["store=12", "Ring=1"]) }
        #expect(bad?.message == "label key 'Ring': must start with a lowercase letter")
    }

    @Test func labelsAreSetReadReplacedAndUnset() throws {
        var labels = DeviceLabels()
        #expect(labels.isEmpty && labels.count == 0 && labels.description == "")
        try labels.set("store", "12")
        try labels.set("ring", "beta")
        try labels.set("store", "14")
        #expect(labels["store"] == "14" && labels["ring"] == "beta" && labels["zone"] == nil)
        #expect(labels.values == ["store": "14", "ring": "beta"])
        #expect(labels.sorted.map(\.key) == ["ring", "store"] && labels.sorted.map(\.value) == ["beta", "14"])
        #expect(labels.description == "ring=beta,store=14")
        #expect(!labels.isEmpty && labels.count == 2)
        let removed = labels.unset("ring")
        let removedAgain = labels.unset("ring")
        #expect(removed)
        #expect(!removedAgain, "unsetting a missing key says it was not set")
        #expect(labels.description == "store=14")
        #expect(try labels == DeviceLabels(["store": "14"]))
    }

    @Test func setRefusesABadKeyOrValueAndLeavesTheLabelsAsTheyWere() throws {
        var labels = try DeviceLabels(["store": "12"])
        let badKey = #expect(throws: DeviceIdentityError.self) { try labels.set("Ring", "beta") }
        #expect(badKey?.message == "label key 'Ring': must start with a lowercase letter")
        let badValue = #expect(throws: DeviceIdentityError.self) { try labels.set("store", "") }
        #expect(badValue?.message == "label value '': is empty")
        #expect(labels.description == "store=12")
    }

    static func numbered(_ count: Int) -> [String: String] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", "\($0)") })
    }

    @Test func aDeviceHasAtMost32Labels() throws {
        #expect(DeviceLabels.maxCount == 32)
        var labels = try DeviceLabels(Self.numbered(32))
        #expect(labels.count == 32)
        try labels.set("k0", "changed")
        #expect(labels["k0"] == "changed", "a 32nd label's value still changes")
        let error = #expect(throws: DeviceIdentityError.self) { try labels.set("extra", "1") }
        #expect(error?.message == "label 'extra': a device has at most 32 labels")
        #expect(labels.count == 32 && labels["extra"] == nil)
        labels.unset("k1")
        try labels.set("extra", "1")
        #expect(labels.count == 32 && labels["extra"] == "1")
    }

    static let badSets: [([String: String], String)] = [
        (numbered(33), "33 labels, at most 32"),
        (["b": "1", "a": "x y", "C": "1"], "label key 'C': must start with a lowercase letter"),
        (["b": "", "a": "1"], "label value '': is empty"),
        (["a": "1", "not": "1"], "label key 'not': is reserved by the target language"),
    ]

    @Test(arguments: badSets)
    func theInitializerRefusesTheFirstBadLabelInKeyOrder(values: [String: String], message: String) {
        let error = #expect(throws: DeviceIdentityError.self) { try DeviceLabels(values) }
        #expect(error?.message == message)
        #expect(error?.code == .invalidLabel)
    }

    @Test func labelsEncodeAsAPlainObjectAndDecodeBack() throws {
        let labels = try DeviceLabels(["store": "12", "ring": "beta"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(labels)
        #expect(String(decoding: data, as: UTF8.self) == #"{"ring":"beta","store":"12"}"#)
        #expect(try JSONDecoder().decode(DeviceLabels.self, from: data) == labels)
        #expect(String(decoding: try encoder.encode(DeviceLabels()), as: UTF8.self) == "{}")
        #expect(try JSONDecoder().decode(DeviceLabels.self, from: Data("{}".utf8)) == DeviceLabels())
    }

    static let badJSON: [(String, String)] = [
        (#"{"Store": "12"}"#, "label key 'Store': must start with a lowercase letter"),
        (#"{"store": "1 2"}"#, "label value '1 2': has the character ' ' \(valueCharacters)"),
        (#"{"id": "1"}"#, "label key 'id': is reserved by the target language"),
        (#"{"a": ""}"#, "label value '': is empty"),
        (
            "{" + (0..<33).map { "\"k\($0)\": \"1\"" }.joined(separator: ", ") + "}",
            "33 labels, at most 32"
        ),
    ]

    @Test(arguments: badJSON)
    func decodingRefusesABadLabelAsCorruptedDataNamingIt(json: String, message: String) {
        let error = #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeviceLabels.self, from: Data(json.utf8)) }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription == message)
    }

    @Test func decodingRefusesAnythingButAnObjectOfStrings() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeviceLabels.self, from: Data(#"["a"]"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeviceLabels.self, from: Data(#"{"a": 1}"#.utf8)) }
    }

    @Test func theErrorCodesAreBadInputFromTheCaller() {
        #expect(DeviceIdentityErrorCode.invalidLabel.description == "invalidLabel")
        #expect(DeviceIdentityErrorCode.invalidId.description == "invalidId")
        #expect(DeviceIdentityErrorCode.invalidLabel != .invalidKey)
        for code in [DeviceIdentityErrorCode.invalidLabel, .invalidId, .invalidKey] { #expect(DeviceIdentityError(code, "x").kind == .usage) }
        #expect(DeviceLabels.reservedWords == ["and", "cohort", "false", "id", "in", "not", "or", "true"])
    }
}
