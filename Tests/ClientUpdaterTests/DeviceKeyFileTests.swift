import ClientUpdater
import DeviceIdentity
import Foundation
import TestSupport
import Testing

/// The device's id and key files, read and written in one place (ClientUpdater's Root):
/// real files in a temp dir, as `init`, `status` and the report sender use them.
@Suite struct DeviceKeyFileTests {
    static let pem = "-----BEGIN PRIVATE KEY-----\nnot really a key\n-----END PRIVATE KEY-----\n"

    @Test func aPlacedKeyIsNeverReplacedAndIsForItsOwnerAlone() throws {
        let tmp = try TemporaryDirectory("device-key-file")
        let layout = RootLayout(root: tmp.path)
        #expect(try DeviceKeyFile.readPrivate(layout) == nil, "no key yet")
        try DeviceKeyFile.placePrivate(Self.pem, layout)
        try DeviceKeyFile.placePrivate("another", layout)
        #expect(try DeviceKeyFile.readPrivate(layout) == Self.pem, "the first key placed stays")
        var info = stat()
        #expect(stat(layout.deviceKey, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["device-key.pem"], "no temporary file left")

        chmod(layout.deviceKey, 0o644)
        let error = try #require(throws: UpdaterError.self) { try DeviceKeyFile.readPrivate(layout) }
        #expect(error.message == "\(layout.deviceKey) has mode 644: a device key is for its owner alone (chmod 600)")
    }

    @Test func thePublicFileHoldsAKeyOrIsReadAsNone() throws {
        let tmp = try TemporaryDirectory("device-key-file")
        let layout = RootLayout(root: tmp.path)
        let key = try DevicePublicKey(validating: String(repeating: "5a", count: 32))
        #expect(DeviceKeyFile.readPublic(layout) == nil)
        DeviceKeyFile.recordPublic(key, layout)
        #expect(try String(contentsOfFile: layout.deviceKeyPublic, encoding: .utf8) == key.hex + "\n")
        #expect(DeviceKeyFile.readPublic(layout) == key)
        for text in [String(repeating: "5A", count: 32), String(repeating: "5a", count: 31), "device key"] {
            try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: layout.deviceKeyPublic))
            #expect(DeviceKeyFile.readPublic(layout) == nil, "\(text) is not a key")
        }
    }

    @Test func theIdFileHoldsADeviceIDMadeOnce() throws {
        let tmp = try TemporaryDirectory("device-id-file")
        let layout = RootLayout(root: tmp.path)
        #expect(DeviceIdFile.read(layout) == nil)
        let id = try DeviceIdFile.readOrCreate(layout)
        #expect(try DeviceIdFile.readOrCreate(layout) == id && DeviceIdFile.read(layout) == id)
        try Data("0123456789ABCDEF0123456789ABCDEF\n".utf8).write(to: URL(fileURLWithPath: layout.deviceId))
        #expect(DeviceIdFile.read(layout) == nil, "uppercase digits are not an id")
    }
}
