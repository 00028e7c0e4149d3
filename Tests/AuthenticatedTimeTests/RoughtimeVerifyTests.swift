import ClientFoundation
import Testing

@testable import AuthenticatedTime

/// Verification, step by step: the recorded answer of a real server verifies, and each
/// spoiled part of a hand-made one fails naming its step.
@Suite struct RoughtimeVerifyTests {
    @Test func recordedAnswerOfTheOutsideServerVerifies() throws {
        let answer = try RoughtimeResponse.parse(RecordedVector.answer)
        let time = try Roughtime.verify(answer, request: RecordedVector.request, longTermKey: RecordedVector.publicKey)
        #expect(time == RoughtimeTime(midpoint: RecordedVector.midpoint, radius: RecordedVector.radius))
    }

    /// Every single-bit change of the recorded answer is refused: every byte of it is
    /// framing, parsed structure, signed, or checked against the request.
    @Test func everyBitFlipOfTheRecordedAnswerIsRefused() {
        var accepted: [Int] = []
        for bit in 0..<(RecordedVector.answer.count * 8) {
            var bytes = RecordedVector.answer
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            if let answer = try? RoughtimeResponse.parse(bytes),
                (try? Roughtime.verify(answer, request: RecordedVector.request, longTermKey: RecordedVector.publicKey)) != nil
            {
                accepted.append(bit)
            }
        }
        #expect(accepted.isEmpty, "bits accepted: \(accepted)")
    }

    @Test func anotherServersKeyIsRefused() throws {
        let answer = try RoughtimeResponse.parse(RecordedVector.answer)
        let other = try RoughtimeTestSigner().publicKey
        #expect { try Roughtime.verify(answer, request: RecordedVector.request, longTermKey: other) } throws: {
            ($0 as? AuthenticatedTimeError)?.message == "CERT.SIG: the delegation is not signed by the server's long-term key"
        }
    }

    @Test func handMadeAnswerInATreeOfFiveVerifies() throws {
        let signer = try RoughtimeTestSigner()
        let requests = (0..<5).map { _ in Roughtime.request(nonce: Roughtime.randomNonce(), serverKey: signer.publicKey) }
        for index in requests.indices {
            let answer = try RoughtimeResponse.parse(signer.answer(requests: requests, index: index, midpoint: 1_800_000_123, radius: 2))
            #expect(answer.path.count == 3)
            #expect(
                try Roughtime.verify(answer, request: requests[index], longTermKey: signer.publicKey)
                    == RoughtimeTime(midpoint: 1_800_000_123, radius: 2))
        }
    }

    /// What each spoiled answer is refused for: (what is spoiled, the message's start).
    @Test func eachStepNamesItsFailure() throws {
        let signer = try RoughtimeTestSigner()
        let requests = (0..<4).map { _ in Roughtime.request(nonce: Roughtime.randomNonce()) }
        let request = requests[1]
        func refusal(_ spoil: (inout RoughtimeTestSigner.Parts) throws -> Void, request: [UInt8] = request, signer: RoughtimeTestSigner = signer)
            throws
            -> String?
        {
            var parts = try signer.parts(requests: requests, index: 1)
            try spoil(&parts)
            let answer = try RoughtimeResponse.parse(parts.packet())
            do {
                _ = try Roughtime.verify(answer, request: request, longTermKey: signer.publicKey)
                return nil
            } catch let error as AuthenticatedTimeError {
                #expect(error.code == .unverified)
                return error.message
            }
        }
        #expect(try refusal { _ in } == nil)
        // A bad signature of the signed response.
        #expect(try refusal { $0.signature[5] ^= 1 } == "SIG: the signed response is not signed by the delegated key")
        // A signed response changed after signing (another midpoint).
        #expect(try refusal { $0.signedResponse[1].value = Wire.bytes(UInt64(1_900_000_000)) }?.hasPrefix("SIG:") == true)
        // A bad delegation signature.
        #expect(try refusal { $0.certificateSignature[0] ^= 1 }?.hasPrefix("CERT.SIG:") == true)
        // The nonce of another request in the same tree: its proof does not lead from ours.
        #expect(try refusal({ _ in }, request: requests[2]) == "the answer's NONC is not the request's nonce")
        // Our nonce echoed, but the tree built without our request.
        let others = (0..<4).map { _ in Roughtime.request(nonce: Roughtime.randomNonce()) }
        #expect(
            try refusal { parts in
                let (root, path) = RoughtimeTestSigner.merkle(others, index: 1)
                parts.signedResponse[3].value = root
                parts.top[2].value = path.flatMap { $0 }
                parts.signature = try signer.delegated.signature(for: Roughtime.responseContext + RoughtimeMessage(parts.signedResponse).encoded())
            } == "PATH and INDX do not prove the request is in SREP.ROOT")
        // Another index.
        #expect(try refusal { $0.top[3].value = Wire.bytes(UInt32(0)) } == "PATH and INDX do not prove the request is in SREP.ROOT")
        // An index with bits past the path.
        #expect(try refusal { $0.top[3].value = Wire.bytes(UInt32(1 | 1 << 5)) } == "PATH and INDX do not prove the request is in SREP.ROOT")
        // A delegation whose window ended before the midpoint.
        var expired = signer
        expired.maximumTime = 1_799_999_999
        #expect(try refusal({ _ in }, signer: expired) == "SREP.MIDP 1800000000 is outside the delegation's window [1700000000, 1799999999]")
        var early = signer
        early.minimumTime = 1_800_000_001
        #expect(try refusal({ _ in }, signer: early)?.hasPrefix("SREP.MIDP 1800000000 is outside") == true)
        // A draft's version.
        #expect(try refusal { $0.signedResponse[2].value = Wire.bytes(UInt32(0x8000_000c)) } == "SREP.VER is 0x8000000c, not version 1")
        // A request-typed answer.
        #expect(try refusal { $0.top[1].value = Wire.bytes(UInt32(0)) } == "the answer's TYPE is 0, not 1 (a response)")
    }

    @Test func zeroRadiusAndVersionListsAreChecked() throws {
        let signer = try RoughtimeTestSigner()
        let request = Roughtime.request(nonce: Roughtime.randomNonce())
        let zero = try RoughtimeResponse.parse(signer.parts(requests: [request], index: 0, radius: 0).packet())
        #expect { try Roughtime.verify(zero, request: request, longTermKey: signer.publicKey) } throws: {
            ($0 as? AuthenticatedTimeError)?.message == "SREP.RADI is zero"
        }
        let unsorted = try RoughtimeResponse.parse(signer.parts(requests: [request], index: 0, versions: [0x8000_000c, 1]).packet())
        #expect { try Roughtime.verify(unsorted, request: request, longTermKey: signer.publicKey) } throws: {
            ($0 as? AuthenticatedTimeError)?.message == "SREP.VERS is not strictly ascending"
        }
        let unlisted = try RoughtimeResponse.parse(signer.parts(requests: [request], index: 0, versions: [0x8000_000c]).packet())
        #expect { try Roughtime.verify(unlisted, request: request, longTermKey: signer.publicKey) } throws: {
            ($0 as? AuthenticatedTimeError)?.message == "SREP.VERS does not list version 1"
        }
    }

    /// Random garbage and random mutations of a valid answer never crash the reader, and none verifies.
    @Test func randomBytesNeverCrash() throws {
        let signer = try RoughtimeTestSigner()
        let request = Roughtime.request(nonce: Roughtime.randomNonce())
        let valid = try signer.answer(requests: [request])
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for round in 0..<3000 {
            var bytes = valid
            if round % 3 == 0 {
                bytes = (0..<Int.random(in: 0...1100, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if bytes != valid, let answer = try? RoughtimeResponse.parse(bytes),
                (try? Roughtime.verify(answer, request: request, longTermKey: signer.publicKey)) != nil
            {
                accepted += 1
            }
        }
        #expect(accepted == 0)
    }
}
