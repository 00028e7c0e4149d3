import AppPackaging
import Foundation
import TestSupport
import Testing

/// The icon goes where the freedesktop icon theme spec looks: a square PNG of a hicolor
/// size, or an SVG; anything else is refused before a package is built.
@Suite struct AppIconTests {
    @Test func debiansOwnIconsAreTakenAtTheirSize() throws {
        // Chromium's icons as Debian installs them (Scripts/test installs chromium).
        for size in [16, 48, 256] {
            let icon = try AppIcon.load("/usr/share/icons/hicolor/\(size)x\(size)/apps/chromium.png")
            #expect(icon.folder == "\(size)x\(size)" && icon.fileExtension == "png")
        }
        let svg = try AppIcon.load(ClientctlBinary.packagePath("Fixtures/sample-icon.svg"))
        #expect(svg.folder == "scalable" && svg.fileExtension == "svg")
    }

    @Test func anIconThatIsNotSquareOrOfAHicolorSizeIsRefused() throws {
        let tmp = try TemporaryDirectory("icon-bad")
        // A PNG header (signature, IHDR) of 48 × 32, then of 50 × 50.
        for (width, height) in [(48, 32), (50, 50)] {
            var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            for value in [width, height] { bytes += [0, 0, UInt8(value >> 8), UInt8(value & 0xFF)] }
            bytes += [8, 6, 0, 0, 0, 0, 0, 0, 0]
            try Data(bytes).write(to: URL(fileURLWithPath: tmp("icon.png")))
            let error = try #require(throws: PackageError.self) { try AppIcon.load(tmp("icon.png")) }
            #expect(error.code == .rejected && error.message.contains("\(width)x\(height)"), "\(error.message)")
        }
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: tmp("icon.svg")))
        #expect(throws: PackageError.self) { try AppIcon.load(tmp("icon.svg")) }
        #expect(throws: PackageError.self) { try AppIcon.load("/etc") }
    }
}
