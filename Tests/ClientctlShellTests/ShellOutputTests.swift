import Foundation
import TestSupport
import Testing

/// A supervisor that reads `--events` and stops reading (`| head -n 1`, a crashed log
/// collector) must not take the shell down: writes to a closed pipe are dropped, never a
/// trap in Foundation's `FileHandle.write(_:)` (which `Scripts/bench/package` hit as
/// "Illegal instruction").
@Suite struct ShellOutputTests {
    @Test func theShellOutlivesAReaderThatClosesItsEventPipe() async throws {
        let rig = try await ReleaseRig(label: "shell-pipe")
        let script = """
            xvfb-run -a -s "-screen 0 1280x1024x24" "$0" --root "$1" --events --exit-after 4 --check-interval 0 | head -n 1
            exit "${PIPESTATUS[0]}"
            """
        let result = try await Subprocess.run("bash", ["-c", script, ClientctlBinary.shellPath, rig.root])
        #expect(result.status == 0, "the shell ran to --exit-after: \(result.errorOutput)")
        #expect(result.output.split(separator: "\n").count == 1, "head read its one line: \(result.output)")
    }
}
