import ClientFoundation
import DeviceIdentity
import Foundation
import Testing

/// The one hex rule and the id and key types built on it (docs/fleet-reports.md#device-keys).
@Suite struct DeviceIDTests {
    static let id = "0123456789abcdef0123456789abcdef"

    @Test(arguments: [
        ("0123456789abcdef0123456789abcdef", true),
        ("0123456789ABCDEF0123456789abcdef", false),
        ("0123456789abcdef0123456789abcde", false),
        ("0123456789abcdef0123456789abcdef0", false),
        ("0123456789abcdef0123456789abcdeg", false),
        (" 123456789abcdef0123456789abcdef", false),
        ("", false),
    ])
    func anIdIs32LowercaseHexDigits(text: String, valid: Bool) {
        #expect(DeviceID.isValid(text) == valid)
        #expect((DeviceID(text) != nil) == valid)
        #expect(DeviceID.isValid(Array(text.utf8)[...]) == valid)
    }

    @Test func aBadIdIsRefusedInOneLineNamingIt() {
        #expect(throws: DeviceIdentityError.self) { try DeviceID(validating: "nope\n") }
        do {
            _ = try DeviceID(validating: "nope\n")
        } catch let error as DeviceIdentityError {
            #expect(error.code == .invalidId && error.message == "device id 'nope\\u{a}': not 32 lowercase hex digits")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func randomIdsAreIdsAndDiffer() {
        let ids = Set((0..<1000).map { _ in DeviceID.random() })
        #expect(ids.count == 1000 && ids.allSatisfy { DeviceID.isValid($0.text) })
    }

    @Test func anIdEncodesAsItsTextAndDecodingChecksIt() throws {
        let id = try #require(DeviceID(Self.id))
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == "[\"\(Self.id)\"]")
        #expect(try JSONDecoder().decode([DeviceID].self, from: data) == [id])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DeviceID].self, from: Data(#"["ABC"]"#.utf8)) }
    }

    @Test func aKeyIs64LowercaseHexDigitsOf32RawBytes() throws {
        let raw = (0..<32).map { UInt8($0 * 7 & 0xff) }
        let key = try #require(DevicePublicKey(raw: raw))
        #expect(key.hex == raw.map { String(format: "%02x", $0) }.joined())
        #expect(DevicePublicKey(hex: key.hex) == key && DevicePublicKey(raw: Array(raw.dropLast())) == nil)
        #expect(DevicePublicKey(hex: key.hex.uppercased()) == nil && DevicePublicKey(hex: Self.id) == nil)
        #expect(throws: DeviceIdentityError.self) { try DevicePublicKey(validating: Self.id) }
    }

    @Test func lowerHexIsOneRule() {
        #expect(LowerHex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(LowerHex.matches("000fa0ff", count: 8) && !LowerHex.matches("000FA0FF", count: 8) && !LowerHex.matches("000fa0f", count: 8))
        #expect((0...255).filter { LowerHex.isDigit(UInt8($0)) }.count == 16)
    }
}
