import AppPackaging
import Foundation
import TestSupport
import Testing

/// The Debian tools package runs are input too: a missing, failing, silent or chatty tool
/// ends in bounded time and memory with a message naming it.
@Suite struct ToolRunTests {
    @Test func aToolThatRunsOverItsTimeIsStopped() throws {
        let tmp = try TemporaryDirectory("tool-slow")
        let started = ContinuousClock.now
        let error = try #require(throws: PackageError.self) {
            try ToolRun(tool: "sleep", arguments: ["30"], timeout: .milliseconds(500)).run(scratch: tmp.path)
        }
        #expect(error.code == .toolFailed && error.message.contains("ran over"), "\(error.message)")
        #expect(ContinuousClock.now - started < .seconds(20), "stopped, not waited for")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty, "its output files are gone")
    }

    @Test func aMissingToolNamesTheDebianPackageThatHasIt() throws {
        let tmp = try TemporaryDirectory("tool-missing")
        let error = try #require(throws: PackageError.self) {
            try ToolRun(tool: "dpkg-shlibdeps-not-here", arguments: []).run(scratch: tmp.path)
        }
        #expect(error.code == .toolFailed && error.message.contains("not found on PATH"), "\(error.message)")
        #expect(error.kind.exitStatus == 69)
    }

    @Test func aFailingToolIsNamedWithItsStatusAndLastLine() throws {
        let tmp = try TemporaryDirectory("tool-fails")
        let error = try #require(throws: PackageError.self) {
            try ToolRun(tool: "sh", arguments: ["-c", "echo first >&2; echo 'the last word' >&2; exit 3"]).run(scratch: tmp.path)
        }
        #expect(error.message.contains("exit status 3") && error.message.contains("the last word"), "\(error.message)")
    }

    @Test func aChattyToolIsReadUpToTheCap() throws {
        let tmp = try TemporaryDirectory("tool-chatty")
        let output = try ToolRun(tool: "sh", arguments: ["-c", "head -c 3000000 /dev/zero | tr '\\\\0' x"]).run(scratch: tmp.path)
        #expect(output.standardOutput.utf8.count == ToolRun.outputCap, "at most the cap is kept")
    }
}
