import DeviceIdentity
import FleetReports
import Foundation
import Testing

/// A collector's device list as `fleet devices` reads it: ids and keys are DeviceIdentity's
/// types, written as the same JSON strings, and an answer naming something else is refused.
@Suite struct DeviceListTests {
    static let id = "0123456789abcdef0123456789abcdef"
    static let key = String(repeating: "3c", count: 32)

    static func json(device: String = id, key: String = key) -> Data {
        Data(
            """
            {"admission":"open","counts":{"accepted":1},"devices":[{"device":"\(device)","key":"\(key)","status":"accepted",\
            "app":"com.example.notes","channel":"stable","firstSeen":0,"lastSeen":0,"held":0}]}
            """.utf8)
    }

    @Test func idsAndKeysReadAsTheirTypesAndWriteAsTheSameStrings() throws {
        let list = try JSONDecoder().decode(DeviceList.self, from: Self.json())
        let entry = try #require(list.devices.first)
        #expect(entry.device == DeviceID(Self.id) && entry.key == DevicePublicKey(hex: Self.key))
        let written = String(decoding: try JSONEncoder().encode(entry), as: UTF8.self)
        #expect(written.contains("\"device\":\"\(Self.id)\"") && written.contains("\"key\":\"\(Self.key)\""), "\(written)")
    }

    @Test(arguments: [
        (id: "0123456789ABCDEF0123456789abcdef", key: key),
        (id: "d1", key: key),
        (id: id, key: String(repeating: "3C", count: 32)),
        (id: id, key: id),
    ])
    func anAnswerNamingNoIdOrNoKeyIsRefused(id: String, key: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeviceList.self, from: Self.json(device: id, key: key)) }
    }
}
