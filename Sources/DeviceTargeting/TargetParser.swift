import ClientFoundation
import DeviceIdentity

/// Reads the target language (see ``TargetExpression``): checks the text's bounds and characters, splits it
/// into tokens and parses them by recursive descent, one function a grammar rule.
struct TargetParser {
    /// A token of the target language.
    enum Token: Equatable {
        /// A keyword, key, value or name: a run of printable ASCII other than space and `( ) , = !`.
        case word(String)
        /// `(`
        case open
        /// `)`
        case close
        /// `,`
        case comma
        /// `=`
        case equals
        /// `!=`
        case notEquals
        /// The end of the text.
        case end
    }

    /// A token and its 1-based character position.
    struct Lexeme {
        let token: Token
        let position: Int
    }

    /// The keywords of the grammar, which no key or cohort name can be.
    static let keywords: Set<String> = ["and", "cohort", "id", "in", "not", "or"]

    /// What may start a test or a group.
    private static let operandExpectation = "a label key, 'id', 'not' or '('"

    private let text: String
    private var lexemes: [Lexeme] = []
    private var index = 0
    private var depth = 0
    private var valueCount = 0
    private var cohortNames: Set<String> = []

    /// Parses `text`.
    /// - Throws: ``DeviceTargetingError`` ``DeviceTargetingErrorCode/invalidTarget``.
    static func parse(_ text: String) throws -> TargetNode {
        var parser = TargetParser(text: text)
        try parser.tokenize()
        let root = try parser.expression()
        // The canonical text is what a manifest carries and a device parses: its bound is the text's.
        let canonical = root.canonical.utf8.count
        if canonical > TargetExpression.maxBytes {
            throw parser.failure(
                "its canonical text (one space between tokens, as the manifest carries it) is \(canonical) bytes, "
                    + "at most \(TargetExpression.maxBytes)")
        }
        return root
    }

    private init(text: String) {
        self.text = text
    }

    // MARK: - Tokens

    /// Checks the size and characters of the text and splits it into ``lexemes``.
    private mutating func tokenize() throws {
        let bytes = Array(text.utf8)
        if bytes.count > TargetExpression.maxBytes {
            throw failure("is \(bytes.count) bytes, at most \(TargetExpression.maxBytes)")
        }
        if text.allSatisfy(\.isWhitespace) { throw failure("is empty") }
        for (offset, scalar) in text.unicodeScalars.enumerated() where !(0x20...0x7E).contains(scalar.value) {
            throw failure("has the character '\(Quoting.escaped(scalar))' at character \(offset + 1): only printable ASCII")
        }
        // Printable ASCII from here on: a byte is a character.
        var start = 0
        while start < bytes.count {
            let position = start + 1
            switch bytes[start] {
            case UInt8(ascii: " "):
                start += 1
            case UInt8(ascii: "("):
                lexemes.append(Lexeme(token: .open, position: position))
                start += 1
            case UInt8(ascii: ")"):
                lexemes.append(Lexeme(token: .close, position: position))
                start += 1
            case UInt8(ascii: ","):
                lexemes.append(Lexeme(token: .comma, position: position))
                start += 1
            case UInt8(ascii: "="):
                lexemes.append(Lexeme(token: .equals, position: position))
                start += 1
            case UInt8(ascii: "!"):
                guard start + 1 < bytes.count, bytes[start + 1] == UInt8(ascii: "=") else {
                    throw failure("expected '!=' at character \(position), got '!'")
                }
                lexemes.append(Lexeme(token: .notEquals, position: position))
                start += 2
            default:
                var end = start + 1
                while end < bytes.count, !Self.endsWord(bytes[end]) { end += 1 }
                lexemes.append(Lexeme(token: .word(String(decoding: bytes[start..<end], as: UTF8.self)), position: position))
                start = end
            }
        }
        lexemes.append(Lexeme(token: .end, position: bytes.count + 1))
    }

    /// Whether `byte` ends a word: a space or one of `( ) , = !`.
    private static func endsWord(_ byte: UInt8) -> Bool {
        " (),=!".utf8.contains(byte)
    }

    /// The next token, not taken.
    private var next: Lexeme { lexemes[index] }

    /// Takes the next token; the end stays.
    private mutating func take() -> Lexeme {
        let lexeme = lexemes[index]
        if index < lexemes.count - 1 { index += 1 }
        return lexeme
    }

    // MARK: - Grammar

    /// `expression = disjunction`, then the end, then the bounds on lists and cohorts.
    private mutating func expression() throws -> TargetNode {
        let node = try disjunction()
        let after = next
        switch after.token {
        case .end: break
        case .close: throw failure("unexpected ')' at character \(after.position): no '(' to close")
        default: throw unexpected(after, expected: "'and', 'or' or the end")
        }
        if valueCount > TargetExpression.maxValues {
            throw failure("lists \(valueCount) values, at most \(TargetExpression.maxValues): put long id lists in a cohort")
        }
        if cohortNames.count > TargetExpression.maxCohorts {
            throw failure("names \(cohortNames.count) cohorts, at most \(TargetExpression.maxCohorts)")
        }
        return node
    }

    /// `disjunction = conjunction { "or" conjunction }`
    private mutating func disjunction() throws -> TargetNode {
        var parts = [try conjunction()]
        while next.token == .word("or") {
            _ = take()
            parts.append(try conjunction())
        }
        return .disjunction(parts)
    }

    /// `conjunction = negation { "and" negation }`
    private mutating func conjunction() throws -> TargetNode {
        var parts = [try negation()]
        while next.token == .word("and") {
            _ = take()
            parts.append(try negation())
        }
        return .conjunction(parts)
    }

    /// `negation = "not" negation | primary`
    private mutating func negation() throws -> TargetNode {
        guard next.token == .word("not") else { return try primary() }
        try enter(take())
        let inner = try negation()
        depth -= 1
        return .not(inner)
    }

    /// `primary = "(" expression ")" | test`
    private mutating func primary() throws -> TargetNode {
        guard next.token == .open else { return try test() }
        try enter(take())
        let inner = try disjunction()
        let close = take()
        guard close.token == .close else { throw unexpected(close, expected: "'and', 'or' or ')'") }
        depth -= 1
        return inner
    }

    /// `test = operand "=" value | operand "!=" value | operand "in" list | operand "not" "in" list
    /// | "id" "in" "cohort" name`, with `operand = "id" | key`.
    private mutating func test() throws -> TargetNode {
        let first = take()
        let operand: TargetOperand
        switch first.token {
        case .word("id"):
            operand = .id
        case .word(let word) where Self.keywords.contains(word) || Self.isMiscasedKeyword(word):
            throw unexpected(first, expected: Self.operandExpectation)
        case .word(let word):
            if let problem = DeviceLabels.keyProblem(word) {
                throw failure("label key \(Quoting.quoted(word)) at character \(first.position): \(problem)")
            }
            operand = .label(word)
        default:
            throw unexpected(first, expected: Self.operandExpectation)
        }
        let op = take()
        switch op.token {
        case .equals:
            return .test(.equals(operand, try value(for: operand)))
        case .notEquals:
            return .test(.notEquals(operand, try value(for: operand)))
        case .word("in"):
            if operand == .id, next.token == .word("cohort") {
                _ = take()
                return .test(.inCohort(try cohortName()))
            }
            return .test(.isIn(operand, try list(for: operand, expected: operand == .id ? "'(' or 'cohort'" : "'('")))
        case .word("not"):
            let inWord = take()
            guard inWord.token == .word("in") else { throw unexpected(inWord, expected: "'in'") }
            return .test(.notIn(operand, try list(for: operand, expected: "'('")))
        default:
            throw unexpected(op, expected: "'=', '!=', 'in' or 'not in'")
        }
    }

    /// `list = "(" value { "," value } ")"`
    private mutating func list(for operand: TargetOperand, expected: String) throws -> [String] {
        let open = take()
        guard open.token == .open else { throw unexpected(open, expected: expected) }
        var values = [try value(for: operand)]
        while true {
            let after = take()
            switch after.token {
            case .comma:
                values.append(try value(for: operand))
            case .close:
                valueCount += values.count
                return values
            default:
                throw unexpected(after, expected: "',' or ')'")
            }
        }
    }

    /// A value: 32 lowercase hex digits for `id`, else a label value.
    private mutating func value(for operand: TargetOperand) throws -> String {
        let lexeme = take()
        guard case .word(let word) = lexeme.token else {
            throw unexpected(lexeme, expected: operand == .id ? "a device id" : "a value")
        }
        switch operand {
        case .id:
            if !DeviceID.isValid(word) {
                throw failure("device id \(Quoting.quoted(word)) at character \(lexeme.position): must be 32 lowercase hex digits")
            }
        case .label:
            if let problem = DeviceLabels.valueProblem(word) {
                throw failure("value \(Quoting.quoted(word)) at character \(lexeme.position): \(problem)")
            }
        }
        return word
    }

    /// A cohort name: the label key grammar, any word but a keyword.
    private mutating func cohortName() throws -> String {
        let lexeme = take()
        guard case .word(let word) = lexeme.token, !Self.keywords.contains(word) else {
            throw unexpected(lexeme, expected: "a cohort name")
        }
        if let problem = DeviceLabels.nameProblem(word) {
            throw failure("cohort name \(Quoting.quoted(word)) at character \(lexeme.position): \(problem)")
        }
        cohortNames.insert(word)
        return word
    }

    // MARK: - Helpers

    /// Goes one `(` or `not` deeper, refusing to go deeper than ``TargetExpression/maxDepth``.
    private mutating func enter(_ lexeme: Lexeme) throws {
        depth += 1
        if depth > TargetExpression.maxDepth {
            throw failure("nests deeper than \(TargetExpression.maxDepth) at character \(lexeme.position)")
        }
    }

    /// Whether `word` is a keyword in other letter case, such as `AND`.
    private static func isMiscasedKeyword(_ word: String) -> Bool {
        word != word.lowercased() && keywords.contains(word.lowercased())
    }

    /// The error for a text that breaks the grammar.
    private func failure(_ message: String) -> DeviceTargetingError {
        DeviceTargetingError(.invalidTarget, "target \(Quoting.quoted(text)): \(message)")
    }

    /// `expected … at character N, got …`, or `unknown word 'AND' … (keywords are lowercase)` for a miscased keyword.
    private func unexpected(_ lexeme: Lexeme, expected: String) -> DeviceTargetingError {
        let got: String
        switch lexeme.token {
        case .word(let word):
            if Self.isMiscasedKeyword(word) {
                return failure("unknown word \(Quoting.quoted(word)) at character \(lexeme.position) (keywords are lowercase)")
            }
            got = Quoting.quoted(word)
        case .open: got = "'('"
        case .close: got = "')'"
        case .comma: got = "','"
        case .equals: got = "'='"
        case .notEquals: got = "'!='"
        case .end: got = "the end"
        }
        return failure("expected \(expected) at character \(lexeme.position), got \(got)")
    }
}
