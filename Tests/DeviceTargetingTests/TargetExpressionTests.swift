import ClientFoundation
import DeviceIdentity
import DeviceTargeting
import Testing

/// Target expressions: every production and its canonical text, precedence, what each operator says of a
/// missing label, device ids, cohorts asked lazily, every refusal with its message, the bounds at and past
/// their limits, `explain` and `and(_:_:)`.
@Suite struct TargetExpressionTests {
    static let deviceId = "0123456789abcdef0123456789abcdef"
    static let otherId = "fedcba9876543210fedcba9876543210"

    static func device(_ labels: [String: String], id: DeviceID? = DeviceID(deviceId)) throws -> TargetDevice {
        TargetDevice(id: id, labels: try DeviceLabels(labels))
    }

    static func parse(_ text: String) throws -> TargetExpression {
        try TargetExpression(parsing: text)
    }

    /// A text and its canonical form; all of them parse.
    static let canonical: [(String, String)] = [
        ("store=12", "store = 12"),
        ("store = 12", "store = 12"),
        ("   store   =   12   ", "store = 12"),
        ("store!=12", "store != 12"),
        ("store in(12,14)", "store in (12, 14)"),
        ("store in ( 12 , 14 )", "store in (12, 14)"),
        ("store not in (12)", "store not in (12)"),
        ("store not in(12,14,16)", "store not in (12, 14, 16)"),
        ("k = A.b_c-d:e/f+g@h", "k = A.b_c-d:e/f+g@h"),
        ("a = and", "a = and"),
        ("a in (or, not, AND, id, cohort)", "a in (or, not, AND, id, cohort)"),
        ("ids = 1", "ids = 1"),
        ("id=\(deviceId)", "id = \(deviceId)"),
        ("id != \(deviceId)", "id != \(deviceId)"),
        ("id in (\(deviceId),\(otherId))", "id in (\(deviceId), \(otherId))"),
        ("id not in (\(otherId))", "id not in (\(otherId))"),
        ("id in cohort pilot", "id in cohort pilot"),
        ("id in cohort true", "id in cohort true"),
        ("id in cohort a.b_c-9", "id in cohort a.b_c-9"),
        ("not store = 12", "not store = 12"),
        ("not (store = 12)", "not store = 12"),
        ("not(not(a=1))", "not not a = 1"),
        ("not (a = 1 and b = 2)", "not (a = 1 and b = 2)"),
        ("not (a = 1 or b = 2)", "not (a = 1 or b = 2)"),
        ("not (a = 1) and b = 2", "not a = 1 and b = 2"),
        ("(a = 1 and b = 2) or c = 3", "a = 1 and b = 2 or c = 3"),
        ("a = 1 and (b = 2 or c = 3)", "a = 1 and (b = 2 or c = 3)"),
        ("(a = 1 or b = 2) and c = 3", "(a = 1 or b = 2) and c = 3"),
        ("(a = 1 or b = 2) and (c = 3 or d = 4)", "(a = 1 or b = 2) and (c = 3 or d = 4)"),
        ("a = 1 or (b = 2 or c = 3)", "a = 1 or b = 2 or c = 3"),
        ("(a = 1 and b = 2) and c = 3", "a = 1 and b = 2 and c = 3"),
        ("a = 1 and (b = 2 and (c = 3))", "a = 1 and b = 2 and c = 3"),
        ("((a = 1))", "a = 1"),
        ("a = 1 or b = 2 and c = 3", "a = 1 or b = 2 and c = 3"),
        ("a = 1 or (b = 2 and c = 3)", "a = 1 or b = 2 and c = 3"),
        ("(a = 1 or b = 2) and not (c = 3 or d = 4)", "(a = 1 or b = 2) and not (c = 3 or d = 4)"),
        ("store in (12,14) and not ring=beta", "store in (12, 14) and not ring = beta"),
        ("id in cohort a or not (id in cohort b and zone != x)", "id in cohort a or not (id in cohort b and zone != x)"),
    ]

    @Test(arguments: canonical)
    func aTextHasOneCanonicalForm(text: String, expected: String) throws {
        let expression = try Self.parse(text)
        #expect(expression.description == expected)
        #expect("\(expression)" == expected)
    }

    /// Every valid text of this suite: its canonical text parses to an equal expression, with the same text.
    static var validTexts: [String] {
        canonical.map(\.0) + evaluations.map(\.0) + cohortCalls.map(\.0) + facts.map(\.0) + explanations.map(\.0)
    }

    @Test(arguments: validTexts)
    func theCanonicalTextParsesToAnEqualExpression(text: String) throws {
        let expression = try Self.parse(text)
        let again = try Self.parse(expression.description)
        #expect(again == expression)
        #expect(again.hashValue == expression.hashValue)
        #expect(again.description == expression.description)
    }

    @Test func equalityIsOfTheParsedExpression() throws {
        #expect(try Self.parse("store=12") == Self.parse("store = 12"))
        #expect(try Self.parse("(a = 1 and b = 2) and c = 3") == Self.parse("a = 1 and (b = 2 and c = 3)"))
        #expect(try Self.parse("not (a = 1)") == Self.parse("not a = 1"))
        #expect(try Self.parse("a = 1 and b = 2") != Self.parse("b = 2 and a = 1"))
        #expect(try Self.parse("store in (12, 14)") != Self.parse("store in (14, 12)"))
        #expect(try Self.parse("store = 12") != Self.parse("store != 12"))
        #expect(try Self.parse("not not a = 1") != Self.parse("a = 1"))
        #expect(try Self.parse("a = 1 or b = 2 and c = 3") != Self.parse("(a = 1 or b = 2) and c = 3"))
        let set: Set<TargetExpression> = try [Self.parse("store=12"), Self.parse("store = 12"), Self.parse("(store = 12)")]
        #expect(set.count == 1)
    }

    /// A text, a device's labels and whether the text admits the device (whose id is ``deviceId``).
    static let evaluations: [(String, [String: String], Bool)] = [
        ("store = 12", ["store": "12"], true),
        ("store = 12", ["store": "13"], false),
        ("store = 12", [:], false),
        ("store != 12", ["store": "12"], false),
        ("store != 12", ["store": "13"], true),
        ("store != 12", [:], true),
        ("store in (12, 14)", ["store": "14"], true),
        ("store in (12, 14)", ["store": "13"], false),
        ("store in (12, 14)", [:], false),
        ("store not in (12, 14)", ["store": "14"], false),
        ("store not in (12, 14)", ["store": "13"], true),
        ("store not in (12, 14)", [:], true),
        ("ring = beta", ["ring": "Beta"], false),
        ("not store = 12", [:], true),
        ("not store = 12", ["store": "12"], false),
        ("not not store = 12", ["store": "12"], true),
        ("not store != 12", [:], false),
        ("a = 1 and b = 1", ["a": "1", "b": "1"], true),
        ("a = 1 and b = 1", ["a": "1"], false),
        ("a = 1 or b = 1", ["b": "1"], true),
        ("a = 1 or b = 1", [:], false),
        ("a = 1 or b = 1 and c = 1", ["a": "1"], true),
        ("a = 1 or b = 1 and c = 1", ["b": "1"], false),
        ("a = 1 or b = 1 and c = 1", ["b": "1", "c": "1"], true),
        ("(a = 1 or b = 1) and c = 1", ["a": "1"], false),
        ("(a = 1 or b = 1) and c = 1", ["a": "1", "c": "1"], true),
        ("not a = 1 and b = 1", [:], false),
        ("not (a = 1 and b = 1)", [:], true),
        ("not a = 1 or b = 1", ["a": "1"], false),
        ("not (a = 1 or b = 1)", ["b": "1"], false),
        ("not (a = 1 or b = 1)", ["c": "1"], true),
        ("id = \(deviceId)", [:], true),
        ("id = \(otherId)", [:], false),
        ("id != \(otherId)", [:], true),
        ("id != \(deviceId)", [:], false),
        ("id in (\(otherId), \(deviceId))", [:], true),
        ("id in (\(otherId))", [:], false),
        ("id not in (\(deviceId))", [:], false),
        ("id not in (\(otherId))", [:], true),
        ("store in (12, 14) and not ring = beta", ["store": "12"], true),
        ("store in (12, 14) and not ring = beta", ["store": "12", "ring": "beta"], false),
    ]

    @Test(arguments: evaluations)
    func anExpressionAdmitsTheDevicesItsTestsHoldFor(text: String, labels: [String: String], admitted: Bool) throws {
        let expression = try Self.parse(text)
        let device = try Self.device(labels)
        #expect(expression.admits(device) == admitted)
        var asked = 0
        #expect(
            expression.admits(device) { _ in
                asked += 1
                return true
            } == admitted)
        #expect(asked == 0, "no cohort, nothing asked")
    }

    /// A text, the cohorts the device is in, whether it is admitted and the cohorts asked in order; the
    /// device has `store=12`.
    static let cohortCalls: [(String, Set<String>, Bool, [String])] = [
        ("id in cohort a", ["a"], true, ["a"]),
        ("id in cohort a", [], false, ["a"]),
        ("not id in cohort a", ["a"], false, ["a"]),
        ("id in cohort a or id in cohort b", ["a"], true, ["a"]),
        ("id in cohort a or id in cohort b", ["b"], true, ["a", "b"]),
        ("id in cohort a or id in cohort b", [], false, ["a", "b"]),
        ("id in cohort a and id in cohort b", [], false, ["a"]),
        ("id in cohort a and id in cohort b", ["a", "b"], true, ["a", "b"]),
        ("id in cohort b and id in cohort a", ["a"], false, ["b"]),
        ("id in cohort a and store = 13", ["a"], false, []),
        ("id in cohort a or store = 12", [], true, []),
        ("store = 12 or id in cohort a", [], true, []),
        ("store = 12 and id in cohort a", ["a"], true, ["a"]),
        ("store = 13 and (id in cohort a or id in cohort b)", ["a", "b"], false, []),
        ("id in cohort a and (store = 12 or id in cohort b)", ["a"], true, ["a"]),
        ("id in cohort a and (store = 13 or id in cohort b)", ["a", "b"], true, ["a", "b"]),
        ("id in cohort a and (store = 13 or id in cohort b)", [], false, ["a"]),
        ("not (id in cohort a and store = 13)", [], true, []),
    ]

    @Test(arguments: cohortCalls)
    func aCohortIsAskedOnlyWhenItsAnswerMatters(text: String, members: Set<String>, admitted: Bool, asked: [String]) throws {
        let expression = try Self.parse(text)
        let device = try Self.device(["store": "12"])
        var calls: [String] = []
        let result = expression.admits(device) { name in
            calls.append(name)
            return members.contains(name)
        }
        #expect(result == admitted)
        #expect(calls == asked)
    }

    struct Unreachable: Error {}

    @Test func anErrorOfTheCohortQuestionPropagates() throws {
        let expression = try Self.parse("store = 12 and id in cohort a")
        #expect(throws: Unreachable.self) { try expression.admits(Self.device(["store": "12"])) { _ in throw Unreachable() } }
        #expect(try !expression.admits(Self.device([:])) { _ in throw Unreachable() }, "not asked: the store decides")
    }

    @Test func withoutACohortQuestionACohortTestIsFalse() throws {
        let device = try Self.device(["store": "12"])
        #expect(try !Self.parse("id in cohort a").admits(device))
        #expect(try Self.parse("not id in cohort a").admits(device))
        #expect(try Self.parse("id in cohort a or store = 12").admits(device))
    }

    /// A text, the label keys it reads, the cohorts it names and whether it reads the id.
    static let facts: [(String, [String], [String], Bool)] = [
        ("store = 12 and ring != beta or store in (1)", ["ring", "store"], [], false),
        ("zone not in (x) and not a = 1", ["a", "zone"], [], false),
        ("id in cohort b or id in cohort a and id in cohort b", [], ["a", "b"], true),
        ("id = \(deviceId) or zone not in (x)", ["zone"], [], true),
        ("not id in (\(deviceId)) and ids = 1", ["ids"], [], true),
    ]

    @Test(arguments: facts)
    func anExpressionSaysWhatItReads(text: String, keys: [String], cohorts: [String], readsId: Bool) throws {
        let expression = try Self.parse(text)
        #expect(expression.labelKeys == keys)
        #expect(expression.cohorts == cohorts)
        #expect(expression.readsDeviceId == readsId)
    }

    /// A text, a device's labels and the explanation.
    static let explanations: [(String, [String: String], String)] = [
        ("store = 7", ["store": "7"], "store=7"),
        ("store = 7", [:], "store unset"),
        ("store = 7 and ring = beta", ["store": "7", "zone": "x"], "store=7, ring unset"),
        ("ring = beta or store in (7) or ring != x", ["store": "7", "ring": "alpha"], "ring=alpha, store=7"),
        ("id in cohort a", ["store": "7"], "id 01234567…"),
        ("store = 7 or id = \(deviceId)", ["store": "7"], "store=7, id 01234567…"),
        ("id not in (\(otherId)) and store = 7", [:], "store unset, id 01234567…"),
    ]

    @Test(arguments: explanations)
    func explainGivesTheDevicesValuesOfWhatTheExpressionReads(text: String, labels: [String: String], expected: String) throws {
        #expect(try Self.parse(text).explain(Self.device(labels)) == expected)
    }

    @Test func explainShortensTheIdOrSaysItIsUnset() throws {
        let expression = try Self.parse("id in cohort a")
        #expect(try expression.explain(Self.device([:], id: DeviceID(Self.otherId))) == "id fedcba98…")
        #expect(try expression.explain(Self.device([:], id: nil)) == "id unset")
    }

    /// What a device's id was read from before it was a type (a short, odd or multi-line text)
    /// cannot become one: a target never sees it.
    @Test func anIdThatIsNotOneNeverReachesATarget() {
        for text in ["abc", "", "a\nbcdefghij", Self.deviceId.uppercased(), Self.deviceId + "0"] {
            #expect(DeviceID(text) == nil, "\(text)")
            #expect(throws: DeviceIdentityError.self) { try DeviceID(validating: text) }
        }
    }

    @Test func andNarrowsATargetByARestriction() throws {
        let target = try Self.parse("store = 12 or store = 14")
        let restriction = try Self.parse("ring = beta")
        let both = TargetExpression.and(target, restriction)
        #expect(both.description == "(store = 12 or store = 14) and ring = beta")
        #expect(try Self.parse(both.description) == both)
        #expect(TargetExpression.and(restriction, target).description == "ring = beta and (store = 12 or store = 14)")
        #expect(try TargetExpression.and(Self.parse("a = 1 and b = 2"), Self.parse("c = 3")) == Self.parse("a = 1 and b = 2 and c = 3"))
        #expect(try TargetExpression.and(Self.parse("a = 1"), Self.parse("not (b = 1 or c = 1)")).description == "a = 1 and not (b = 1 or c = 1)")
        let devices = try [
            Self.device(["store": "12", "ring": "beta"]), Self.device(["store": "12"]), Self.device(["store": "13", "ring": "beta"]),
            Self.device(["store": "14", "ring": "beta"]), Self.device([:]),
        ]
        #expect(devices.map { both.admits($0) } == [true, false, false, true, false])
        #expect(devices.map { both.admits($0) } == devices.map { target.admits($0) && restriction.admits($0) })
    }

    static let longKey = String(repeating: "k", count: 64)
    static let longValue = String(repeating: "v", count: 65)

    /// A text and the message it is refused with.
    static let refusals: [(String, String)] = [
        ("", "target '': is empty"),
        ("   ", "target '   ': is empty"),
        ("\n\t ", #"target '\u{a}\u{9} ': is empty"#),
        ("store\t= 12", #"target 'store\u{9}= 12': has the character '\u{9}' at character 6: only printable ASCII"#),
        ("store = 12\n", #"target 'store = 12\u{a}': has the character '\u{a}' at character 11: only printable ASCII"#),
        ("store = café", "target 'store = café': has the character 'é' at character 12: only printable ASCII"),
        ("store = 1\u{0}", #"target 'store = 1\u{0}': has the character '\u{0}' at character 10: only printable ASCII"#),
        ("store = 1\u{7F}", #"target 'store = 1\u{7f}': has the character '\u{7f}' at character 10: only printable ASCII"#),
        ("store in (12,", "target 'store in (12,': expected a value at character 14, got the end"),
        ("store in (12,)", "target 'store in (12,)': expected a value at character 14, got ')'"),
        ("store in (12,,14)", "target 'store in (12,,14)': expected a value at character 14, got ','"),
        ("store in ()", "target 'store in ()': expected a value at character 11, got ')'"),
        ("store in (12 14)", "target 'store in (12 14)': expected ',' or ')' at character 14, got '14'"),
        ("store in (12", "target 'store in (12': expected ',' or ')' at character 13, got the end"),
        ("store in 12", "target 'store in 12': expected '(' at character 10, got '12'"),
        ("store in cohort a", "target 'store in cohort a': expected '(' at character 10, got 'cohort'"),
        ("store =", "target 'store =': expected a value at character 8, got the end"),
        ("store = )", "target 'store = )': expected a value at character 9, got ')'"),
        ("store == 12", "target 'store == 12': expected a value at character 8, got '='"),
        ("store", "target 'store': expected '=', '!=', 'in' or 'not in' at character 6, got the end"),
        ("store < 12", "target 'store < 12': expected '=', '!=', 'in' or 'not in' at character 7, got '<'"),
        ("store ! 12", "target 'store ! 12': expected '!=' at character 7, got '!'"),
        ("store not = 12", "target 'store not = 12': expected 'in' at character 11, got '='"),
        ("a = 1 AND b = 2", "target 'a = 1 AND b = 2': unknown word 'AND' at character 7 (keywords are lowercase)"),
        ("a = 1 Or b = 2", "target 'a = 1 Or b = 2': unknown word 'Or' at character 7 (keywords are lowercase)"),
        ("NOT a = 1", "target 'NOT a = 1': unknown word 'NOT' at character 1 (keywords are lowercase)"),
        ("ID = 1", "target 'ID = 1': unknown word 'ID' at character 1 (keywords are lowercase)"),
        ("store IN (1)", "target 'store IN (1)': unknown word 'IN' at character 7 (keywords are lowercase)"),
        ("store NOT in (1)", "target 'store NOT in (1)': unknown word 'NOT' at character 7 (keywords are lowercase)"),
        ("id in COHORT x", "target 'id in COHORT x': unknown word 'COHORT' at character 7 (keywords are lowercase)"),
        ("id = 12", "target 'id = 12': device id '12' at character 6: must be 32 lowercase hex digits"),
        (
            "id = 0123456789ABCDEF0123456789ABCDEF",
            "target 'id = 0123456789ABCDEF0123456789ABCDEF': device id '0123456789ABCDEF0123456789ABCDEF' at character 6: "
                + "must be 32 lowercase hex digits"
        ),
        (
            "id != \(deviceId)0",
            "target 'id != \(deviceId)0': device id '\(deviceId)0' at character 7: must be 32 lowercase hex digits"
        ),
        (
            "id in (\(deviceId), 12)",
            "target 'id in (\(deviceId), 12)': device id '12' at character 42: must be 32 lowercase hex digits"
        ),
        ("id in 12", "target 'id in 12': expected '(' or 'cohort' at character 7, got '12'"),
        ("id not in cohort x", "target 'id not in cohort x': expected '(' at character 11, got 'cohort'"),
        ("id", "target 'id': expected '=', '!=', 'in' or 'not in' at character 3, got the end"),
        ("id in cohort", "target 'id in cohort': expected a cohort name at character 13, got the end"),
        ("id in cohort not", "target 'id in cohort not': expected a cohort name at character 14, got 'not'"),
        ("id in cohort (a)", "target 'id in cohort (a)': expected a cohort name at character 14, got '('"),
        ("id in cohort Pilot", "target 'id in cohort Pilot': cohort name 'Pilot' at character 14: must start with a lowercase letter"),
        (
            "id in cohort a:b",
            "target 'id in cohort a:b': cohort name 'a:b' at character 14: has the character ':' (allowed: lowercase letters, digits and . _ -)"
        ),
        ("id in cohort a b", "target 'id in cohort a b': expected 'and', 'or' or the end at character 16, got 'b'"),
        ("a = 1)", "target 'a = 1)': unexpected ')' at character 6: no '(' to close"),
        ("(a = 1))", "target '(a = 1))': unexpected ')' at character 8: no '(' to close"),
        ("(a = 1", "target '(a = 1': expected 'and', 'or' or ')' at character 7, got the end"),
        ("(a = 1 b = 2)", "target '(a = 1 b = 2)': expected 'and', 'or' or ')' at character 8, got 'b'"),
        ("a = 1 b = 2", "target 'a = 1 b = 2': expected 'and', 'or' or the end at character 7, got 'b'"),
        ("a = 1 and", "target 'a = 1 and': expected a label key, 'id', 'not' or '(' at character 10, got the end"),
        ("a = 1 and or b = 2", "target 'a = 1 and or b = 2': expected a label key, 'id', 'not' or '(' at character 11, got 'or'"),
        ("and = 1", "target 'and = 1': expected a label key, 'id', 'not' or '(' at character 1, got 'and'"),
        ("cohort = 1", "target 'cohort = 1': expected a label key, 'id', 'not' or '(' at character 1, got 'cohort'"),
        ("()", "target '()': expected a label key, 'id', 'not' or '(' at character 2, got ')'"),
        ("not", "target 'not': expected a label key, 'id', 'not' or '(' at character 4, got the end"),
        ("= 12", "target '= 12': expected a label key, 'id', 'not' or '(' at character 1, got '='"),
        (", a = 1", "target ', a = 1': expected a label key, 'id', 'not' or '(' at character 1, got ','"),
        ("!= 1", "target '!= 1': expected a label key, 'id', 'not' or '(' at character 1, got '!='"),
        ("Store = 12", "target 'Store = 12': label key 'Store' at character 1: must start with a lowercase letter"),
        ("true = 1", "target 'true = 1': label key 'true' at character 1: is reserved by the target language"),
        ("st#re = 1", "target 'st#re = 1': label key 'st#re' at character 1: has the character '#' (allowed: lowercase letters, digits and . _ -)"),
        (
            "\(longKey) = 1",
            "target '\(longKey)…': label key '\(longKey)' at character 1: is 64 characters, at most 63"
        ),
        (
            "store = a#b",
            "target 'store = a#b': value 'a#b' at character 9: has the character '#' (allowed: letters, digits and . _ - : / + @)"
        ),
        (
            "s = \(longValue)",
            "target 's = \(longValue.prefix(60))…': value '\(longValue.prefix(64))…' at character 5: is 65 characters, at most 64"
        ),
        (
            "store in (1, \"2\")",
            #"target 'store in (1, "2")': value '"2"' at character 14: has the character '"' (allowed: letters, digits and . _ - : / + @)"#
        ),
    ]

    @Test(arguments: refusals)
    func aBadTextIsRefusedInOneLineSayingWhatAndWhere(text: String, message: String) {
        let error = #expect(throws: DeviceTargetingError.self) { try TargetExpression(parsing: text) }
        #expect(error?.message == message)
        #expect(error?.code == .invalidTarget)
        #expect(error?.kind == .usage)
        #expect(error?.message.contains("\n") == false)
    }

    static func refusal(_ text: String) -> String? {
        do {
            _ = try TargetExpression(parsing: text)
            return nil
        } catch {
            return (error as? DeviceTargetingError)?.message ?? "\(error)"
        }
    }

    @Test func theTextIsAtMost4096Bytes() throws {
        #expect(TargetExpression.maxBytes == 4096)
        let atLimit = "a = 1" + String(repeating: " ", count: 4091)
        #expect(atLimit.utf8.count == 4096)
        #expect(try Self.parse(atLimit).description == "a = 1")
        let over = atLimit + " "
        #expect(Self.refusal(over) == "target 'a = 1\(String(repeating: " ", count: 59))…': is 4097 bytes, at most 4096")
        let wide = "a = 1 or b = é" + String(repeating: " ", count: 4082)
        #expect(wide.utf8.count == 4097, "bytes, not characters")
        #expect(Self.refusal(wide)?.hasSuffix(": is 4097 bytes, at most 4096") == true)
    }

    /// The bound holds for the canonical text too, which a manifest carries and a device
    /// parses: `a=1` is `a = 1`, so a compact text under 4,096 bytes can have a canonical text
    /// over them; it is refused as a target (a usage error), not signed into a manifest no
    /// device reads (issue 75).
    @Test func theCanonicalTextIsAtMost4096BytesToo() throws {
        let compact = (0..<500).map { "k=v\($0 % 10)" }.joined(separator: " or ")
        #expect(compact.utf8.count <= 4096)
        let canonical = (0..<500).map { "k = v\($0 % 10)" }.joined(separator: " or ")
        #expect(canonical.utf8.count > 4096)
        let message = try #require(Self.refusal(compact))
        #expect(message.hasPrefix("target 'k=v0 or k=v1 or "), "\(message)")
        #expect(
            message.hasSuffix(
                "': its canonical text (one space between tokens, as the manifest carries it) is \(canonical.utf8.count) bytes, at most 4096"),
            "\(message)")
        let fits = (0..<400).map { "k=v\($0 % 10)" }.joined(separator: " or ")
        #expect(try Self.parse(fits).description.utf8.count <= 4096)
    }

    @Test func parenthesesAndNotNestAtMost16Deep() throws {
        #expect(TargetExpression.maxDepth == 16)
        let parens16 = String(repeating: "(", count: 16) + "a = 1" + String(repeating: ")", count: 16)
        #expect(try Self.parse(parens16).description == "a = 1")
        let parens17 = "(" + parens16 + ")"
        #expect(Self.refusal(parens17) == "target '\(parens17)': nests deeper than 16 at character 17")
        let nots16 = String(repeating: "not ", count: 16) + "a = 1"
        #expect(try Self.parse(nots16).description == nots16)
        let nots17 = "not " + nots16
        #expect(Self.refusal(nots17) == "target '\(nots17.prefix(64))…': nests deeper than 16 at character 65")
        let mixed16 = String(repeating: "not (", count: 8) + "a = 1 or b = 2" + String(repeating: ")", count: 8)
        #expect(try Self.parse(mixed16).description == String(repeating: "not ", count: 7) + "not (a = 1 or b = 2)")
        let mixed17 = String(repeating: "not (", count: 8) + "not a = 1" + String(repeating: ")", count: 8)
        #expect(Self.refusal(mixed17) == "target '\(mixed17)': nests deeper than 16 at character 41")
        let lists = "a in (1) and " + String(repeating: "(", count: 16) + "b not in (2)" + String(repeating: ")", count: 16)
        #expect(try Self.parse(lists).description == "a in (1) and b not in (2)", "a list's parentheses do not nest")
        let wide = (0..<40).map { "(k\($0) = 1 or k\($0) = 2)" }.joined(separator: " and ")
        #expect(try Self.parse(wide).labelKeys.count == 40, "side by side is not deeper")
    }

    @Test func listsHoldAtMost1000ValuesTogether() throws {
        #expect(TargetExpression.maxValues == 1000)
        let values1000 = Array(repeating: "1", count: 1000).joined(separator: ",")
        let atLimit = try Self.parse("s in (\(values1000)) and t = 1 and u != 2")
        #expect(try Self.parse(atLimit.description) == atLimit, "= and != values do not count")
        let over = "s in (\(values1000),2)"
        #expect(Self.refusal(over) == "target '\(over.prefix(64))…': lists 1001 values, at most 1000: put long id lists in a cohort")
        let first = Array(repeating: "1", count: 500).joined(separator: ",")
        let second = Array(repeating: "2", count: 501).joined(separator: ",")
        let split = "s in (\(first)) or t not in (\(second))"
        #expect(Self.refusal(split) == "target '\(split.prefix(64))…': lists 1001 values, at most 1000: put long id lists in a cohort")
    }

    @Test func anExpressionNamesAtMost8Cohorts() throws {
        #expect(TargetExpression.maxCohorts == 8)
        let eight = (1...8).map { "id in cohort c\($0)" }.joined(separator: " or ")
        #expect(try Self.parse(eight).cohorts == (1...8).map { "c\($0)" })
        let repeated = eight + " or " + eight + " and id in cohort c1"
        #expect(try Self.parse(repeated).cohorts.count == 8, "a cohort named twice counts once")
        let nine = eight + " or not id in cohort c9"
        #expect(Self.refusal(nine) == "target '\(nine.prefix(64))…': names 9 cohorts, at most 8")
    }
}
