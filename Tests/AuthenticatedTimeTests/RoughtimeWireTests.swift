import ClientFoundation
import Testing

@testable import AuthenticatedTime

/// The wire format: requests as a real server expects them, and the strict reader, which
/// turns every malformed packet into an error naming what, never a crash.
@Suite struct RoughtimeWireTests {
    /// The request the outside server's own client sent for version 1 is byte for byte ours.
    @Test func requestMatchesTheRecordedOneOfTheOutsideClient() throws {
        let recorded = try RoughtimeMessage.parse(RoughtimePacket.unframe(RecordedVector.request, what: "request"), what: "request")
        let nonce = try #require(recorded.value(.nonc))
        #expect(Roughtime.request(nonce: nonce) == RecordedVector.request)
    }

    @Test func requestIsPaddedToTheMinimumSizeWithItsFields() throws {
        let key = try RoughtimeTestSigner().publicKey
        let nonce = Roughtime.randomNonce()
        let request = Roughtime.request(nonce: nonce, serverKey: key)
        #expect(request.count == Roughtime.requestSize)
        let message = try RoughtimeMessage.parse(RoughtimePacket.unframe(request, what: "request"), what: "request")
        #expect(message.fields.map(\.tag.description) == ["VER", "SRV", "NONC", "TYPE", "ZZZZ"])
        #expect(try message.uint32(.ver, in: "request") == 1)
        #expect(try message.uint32(.type, in: "request") == 0)
        #expect(message.value(.nonc) == nonce)
        #expect(message.value(.srv) == RoughtimeHash.hash([0xff], key))
        #expect(Roughtime.randomNonce() != nonce && nonce.count == 32)
    }

    @Test func recordedAnswerParses() throws {
        let answer = try RoughtimeResponse.parse(RecordedVector.answer)
        #expect(answer.signedResponse.midpoint == RecordedVector.midpoint)
        #expect(answer.signedResponse.radius == RecordedVector.radius)
        #expect(answer.signedResponse.versions.first == 1)
        #expect(answer.certificate.minimumTime <= answer.signedResponse.midpoint)
        #expect(answer.path.isEmpty && answer.index == 0)
    }

    /// Every truncation of a real answer is an error, never a crash or a success.
    @Test func everyTruncationIsAnError() {
        for length in 0..<RecordedVector.answer.count {
            #expect(throws: AuthenticatedTimeError.self) { try RoughtimeResponse.parse(Array(RecordedVector.answer.prefix(length))) }
        }
    }

    @Test(
        arguments: [
            // (what, bytes, what the message says)
            ("no tags", [0, 0, 0, 0], "zero tags"),
            ("count past the bytes", [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0], "4294967295 tags need a 34359738360-byte header, message is 8 bytes"),
            ("not a multiple of 4", [1, 0, 0, 0, 0x53, 0x49, 0x47], "not a multiple of 4"),
            ("offset not aligned", [2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0], "is not a multiple of 4"),
            ("offset past the values", [2, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0], "past the 4 bytes of values"),
            (
                "offsets decreasing", [3, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0] + [UInt8](repeating: 0, count: 12),
                "before the previous one"
            ),
            ("tags unsorted", [2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0], "must be strictly ascending"),
            ("tags repeated", [2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0], "must be strictly ascending"),
            ("header past the end", [3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "3 tags need a 24-byte header, message is 16 bytes"),
        ] as [(String, [UInt8], String)])
    func malformedMessagesAreNamedErrors(what: String, bytes: [UInt8], says: String) {
        let error = #expect(throws: AuthenticatedTimeError.self, "\(what)") { try RoughtimeMessage.parse(bytes, what: "test") }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains(says) == true, "\(what): \(error?.message ?? "")")
    }

    @Test func wellFormedMessageRoundTrips() throws {
        let message = RoughtimeMessage([
            .init(tag: .nonc, value: [1, 2, 3, 4]), .init(tag: .ver, value: [1, 0, 0, 0]), .init(tag: .path, value: []),
        ])
        let parsed = try RoughtimeMessage.parse(message.encoded(), what: "test")
        #expect(parsed == message)
        #expect(parsed.fields.map(\.tag.description) == ["VER", "NONC", "PATH"])
    }

    @Test func framingIsChecked() throws {
        let message = RoughtimeMessage([.init(tag: .ver, value: [1, 0, 0, 0])]).encoded()
        var packet = RoughtimePacket.frame(message)
        #expect(try RoughtimePacket.unframe(packet, what: "p") == message)
        packet[0] = UInt8(ascii: "X")
        #expect { try RoughtimePacket.unframe(packet, what: "p") } throws: { ($0 as? AuthenticatedTimeError)?.message.contains("ROUGHTIM") == true }
        let long = RoughtimePacket.frame(message) + [0, 0, 0, 0]
        #expect { try RoughtimePacket.unframe(long, what: "p") } throws: {
            ($0 as? AuthenticatedTimeError)?.message == "p: header announces 12 bytes of message, packet has 16"
        }
    }

    @Test func anAnswerLargerThanARequestIsRefused() {
        let huge = RoughtimePacket.frame([UInt8](repeating: 0, count: 2048))
        #expect { try RoughtimeResponse.parse(huge) } throws: {
            ($0 as? AuthenticatedTimeError)?.message == "answer: 2060 bytes, more than the 1024 a request may get"
        }
    }

    /// Fields of the wrong size or missing are named, down to the nested message.
    @Test func wronglySizedFieldsAreNamed() throws {
        let signer = try RoughtimeTestSigner()
        let request = Roughtime.request(nonce: Roughtime.randomNonce())
        var parts = try signer.parts(requests: [request], index: 0)
        parts.signedResponse[0].value = [3, 0, 0, 0, 0, 0, 0, 0]
        #expect { try RoughtimeResponse.parse(parts.packet()) } throws: {
            ($0 as? AuthenticatedTimeError)?.message == "SREP.RADI: 8 bytes, expected 4"
        }
        parts = try signer.parts(requests: [request], index: 0)
        parts.delegation.removeAll { $0.tag == .maxt }
        #expect { try RoughtimeResponse.parse(parts.packet()) } throws: { ($0 as? AuthenticatedTimeError)?.message == "CERT.DELE: no MAXT tag" }
        parts = try signer.parts(requests: [request], index: 0)
        parts.top.removeAll { $0.tag == .indx }
        #expect { try RoughtimeResponse.parse(parts.packet()) } throws: { ($0 as? AuthenticatedTimeError)?.message == "answer: no INDX tag" }
        parts = try signer.parts(requests: [request], index: 0)
        parts.top[2].value = [UInt8](repeating: 7, count: 36)
        #expect { try RoughtimeResponse.parse(parts.packet()) } throws: {
            ($0 as? AuthenticatedTimeError)?.message.hasPrefix("answer.PATH: 36 bytes") == true
        }
    }
}
