import ApplyPolicy
import Foundation
import Testing

@Suite("ApplyPolicy JSON")
struct ApplyPolicyCodingTests {
    func encoded(_ policy: ApplyPolicy) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(policy), as: UTF8.self)
    }

    func decoded(_ json: String) throws -> ApplyPolicy {
        try JSONDecoder().decode(ApplyPolicy.self, from: Data(json.utf8))
    }

    @Test("exact encoded bytes of a full policy")
    func exactBytes() throws {
        let policy = try ApplyPolicy(mode: .idle, idleSeconds: 300, deadline: try at("2026-12-01T00:00:00Z"), graceSeconds: 3_600)
        #expect(try encoded(policy) == #"{"deadline":"2026-12-01T00:00:00Z","graceSeconds":3600,"idleSeconds":300,"mode":"idle"}"#)
    }

    @Test("exact encoded bytes of today's rule: absent optionals are not written")
    func exactBytesDefault() throws {
        #expect(try encoded(.nextStart) == #"{"graceSeconds":3600,"mode":"next-start"}"#)
    }

    @Test("round trip", arguments: ApplyMode.allCases)
    func roundTrip(mode: ApplyMode) throws {
        let policy = try ApplyPolicy(mode: mode, idleSeconds: 90, deadline: try at("2027-01-02T03:04:05Z"), graceSeconds: 0)
        let again = try decoded(try encoded(policy))
        #expect(again == policy)
        #expect(again.mode == mode)
        #expect(again.deadline == (try at("2027-01-02T03:04:05Z")))
    }

    @Test("decoding: missing grace defaults to 3600, null optionals are absent")
    func decodingDefaults() throws {
        let policy = try decoded(#"{"mode":"window","idleSeconds":null,"deadline":"2026-12-01T00:00:00Z"}"#)
        #expect(policy.mode == .window)
        #expect(policy.graceSeconds == 3_600)
        #expect(policy.idleSeconds == nil)
        #expect(policy.deadline == (try at("2026-12-01T00:00:00Z")))
        #expect(try encoded(policy) == #"{"deadline":"2026-12-01T00:00:00Z","graceSeconds":3600,"mode":"window"}"#)
    }

    @Test("an unknown mode decodes as next-start, keeps its text, and encodes back unchanged")
    func unknownMode() throws {
        let json = #"{"graceSeconds":60,"mode":"on-reboot-twice"}"#
        let policy = try decoded(json)
        #expect(policy.mode == .nextStart)
        #expect(policy.unknownMode == "on-reboot-twice")
        #expect(policy != ApplyPolicy.nextStart)
        #expect(try encoded(policy) == json)
        let input = ApplyInput(policy: policy, stagedAt: try at("2026-06-10T12:00:00Z"), hostStartedAt: try at("2026-06-10T11:00:00Z"))
        #expect(ApplyDecision.decide(input, now: try at("2026-06-10T12:00:00Z")) == .wait(.nextStart))
    }

    @Test("an unknown mode does not hide a deadline: it still applies")
    func unknownModeWithDeadline() throws {
        let policy = try decoded(#"{"deadline":"2026-06-10T11:00:00Z","graceSeconds":0,"mode":"future-mode"}"#)
        let input = ApplyInput(policy: policy, stagedAt: try at("2026-06-10T10:00:00Z"), hostStartedAt: try at("2026-06-10T09:00:00Z"))
        #expect(ApplyDecision.decide(input, now: try at("2026-06-10T12:00:00Z")) == .switchNow(trigger: .graceExpired))
    }

    @Test("the raw-field reading matches decoding")
    func received() throws {
        let policy = try ApplyPolicy.received(mode: "later", idleSeconds: 30, deadline: "2026-12-01T00:00:00Z", graceSeconds: nil)
        #expect(policy.mode == .nextStart)
        #expect(policy.unknownMode == "later")
        #expect(policy.idleSeconds == 30)
        #expect(policy.graceSeconds == 3_600)
        #expect(policy == (try decoded(#"{"mode":"later","idleSeconds":30,"deadline":"2026-12-01T00:00:00Z"}"#)))
    }

    @Test(
        "out-of-range values in a received document are refused with the module's error",
        arguments: [
            (#"{"mode":"idle"}"#, ApplyPolicyError.Code.invalidMode, "'idle'"),
            (#"{"mode":"idle","idleSeconds":0}"#, .invalidDuration, "apply idle seconds 0 "),
            (#"{"mode":"now","graceSeconds":-5}"#, .invalidDuration, "apply grace seconds -5 "),
            (#"{"mode":"now","deadline":"2026-12-01T00:00:00"}"#, .invalidDeadline, "'2026-12-01T00:00:00'"),
            (#"{"mode":"now","deadline":"next week"}"#, .invalidDeadline, "'next week'"),
        ]
    )
    func refusedValues(json: String, code: ApplyPolicyError.Code, naming: String) {
        expectRefusal(code, naming: naming) { _ = try decoded(json) }
    }

    @Test("structural problems stay decoding errors", arguments: [#"{"graceSeconds":60}"#, #"{"mode":3}"#, #"{"mode":"now","graceSeconds":"1h"}"#])
    func structural(json: String) {
        #expect(throws: DecodingError.self) { _ = try decoded(json) }
    }

    /// A signed deadline has the one grammar of signed times (docs/formats.md#times): UTC.
    /// An offset, lower case or a fraction were read before as an operator's input is;
    /// `expires` in the same manifest refused them, so one document had two grammars.
    @Test(
        "decoding: a signed deadline is UTC in whole seconds, as every signed time",
        arguments: [
            ("2026-12-01T01:00:00+01:00", "has an offset: a signed time is UTC"), ("2026-12-01t00:00:00z", "is not an RFC 3339 time"),
            ("2026-12-01T00:00:00.5Z", "has fractional seconds"), ("2026-12-01T00:00:00", "has no zone"),
        ])
    func signedDeadlinesHaveTheGrammarOfSignedTimes(text: String, reason: String) {
        do {
            _ = try decoded(#"{"mode":"window","deadline":""# + text + #""}"#)
            Issue.record("\(text) was accepted")
        } catch let error as ApplyPolicyError {
            #expect(error.message.contains(reason), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
