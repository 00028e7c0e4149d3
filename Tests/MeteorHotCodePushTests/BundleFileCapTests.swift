import ClientUpdater
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// A Meteor bundle on the device (the embedded `www`, a downloaded version) is local input
/// like any other: its `program.json` and `index.html` are refused past their caps before
/// they are read, and a FIFO in their place is refused instead of waited on (before, both
/// were read whole with `FileManager`, which blocks on a FIFO with no writer).
@Suite(.timeLimit(.minutes(1))) struct BundleFileCapTests {
    @Test(arguments: ["huge", "fifo"]) func aProgramJSONPastItsCapOrAFIFOIsRefusedUnread(_ kind: String) throws {
        let dir = try TemporaryDirectory("bundle-\(kind)")
        let program = dir("program.json")
        let cap = AssetManifest.Limits().maxBytes
        if kind == "fifo" {
            #expect(mkfifo(program, 0o644) == 0)
        } else {
            #expect(FileManager.default.createFile(atPath: program, contents: nil) && truncate(program, off_t(cap + 1)) == 0)
        }
        let error = #expect(throws: MeteorError.self) { try AssetBundle.load(directory: dir.path, platform: .ios, parent: nil) }
        if kind == "fifo" {
            #expect(error?.code == .invalidManifest)
            #expect(error?.message == "\(program) is not a regular file")
        } else {
            #expect(error?.code == .tooLarge)
            #expect(error?.message == "\(program) is \(cap + 1) bytes, over the 8 MiB cap for this file: refusing to read it")
        }
    }

    @Test func anIndexPageThatIsAFIFOOrHugeHasNoRuntimeConfig() throws {
        let dir = try TemporaryDirectory("bundle-page")
        #expect(mkfifo(dir("fifo.html"), 0o644) == 0)
        let fifo = #expect(throws: MeteorError.self) { try RuntimeConfig.load(indexFile: dir("fifo.html")) }
        #expect(fifo?.code == .runtimeConfig)
        #expect(fifo?.message == "Couldn't load runtime config from index file: \(dir("fifo.html")) is not a regular file")

        #expect(FileManager.default.createFile(atPath: dir("huge.html"), contents: nil))
        #expect(truncate(dir("huge.html"), off_t(Organizer.maxPageBytes + 1)) == 0)
        let huge = #expect(throws: MeteorError.self) { try RuntimeConfig.load(indexFile: dir("huge.html")) }
        #expect(huge?.message.hasSuffix("over the 64 MiB cap for this file: refusing to read it") == true, "\(huge?.message ?? "")")
    }
}
