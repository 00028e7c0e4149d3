import Foundation
import TestSupport
import Testing

/// Whatever a page asks for, the shell's memory stays within a fixed budget and every
/// request is answered (issue 34, docs/native-shell.md#ranges-and-memory): 128 parallel
/// byte ranges of 16 MiB, a 300 MB file read whole and from an open range, on `app://` and
/// on the loopback origin. Real pages in real windows under Xvfb; the shell's peak resident
/// memory (`VmHWM`) is read from /proc after the page's first paint and after its reads.
extension NativeShellTests {
    /// The large file's size: 300 MB in blocks of 4 KiB, each starting with its index
    /// (UInt32, little-endian) and 28 bytes of noise (the archive stays under the
    /// extraction's 200:1 ratio), zeros after.
    static let bigFileSize = 300 << 20

    /// The shell may grow this much past its peak at the first paint (the documented
    /// budget; measured: +34 to +37 MiB, against +1150 MiB with pipes but no pacing by
    /// the web process and 4.7 GiB before issue 34).
    static let memoryBudgetKiB = 64 << 10

    static func bigFile() -> Data {
        var bytes = [UInt8](repeating: 0, count: bigFileSize)
        var noise: UInt32 = 0x9E37_79B9
        for block in 0..<(bigFileSize / 4096) {
            let at = block * 4096
            withUnsafeBytes(of: UInt32(block).littleEndian) { for (i, b) in $0.enumerated() { bytes[at + i] = b } }
            for i in 4..<32 {
                noise = noise &* 1_664_525 &+ 1_013_904_223
                bytes[at + i] = UInt8(truncatingIfNeeded: noise >> 24)
            }
        }
        return Data(bytes)
    }

    /// The page: after 1.5 s (its first paint measured), reads `/big.bin` as the run's
    /// turn says (localStorage counts the runs of an origin: 128 parallel 16 MiB ranges at
    /// the first, the whole file and an open range `bytes=N-` at the second), checking the
    /// status, the length, `Content-Range` and every block index that falls in a read chunk;
    /// paints green and acknowledges (red and a `failed:` message when a check failed).
    static let bigReads = """
        (async function () {
          var size = \(bigFileSize), mb = 1 << 20, fails = [];
          var turn = Number(localStorage.getItem('turn') || '0'); localStorage.setItem('turn', String(turn + 1));
          async function read(range, first, length) {
            var r = await fetch('/big.bin', range ? { headers: { Range: range } } : {});
            var expected = range ? 206 : 200;
            if (r.status !== expected) { fails.push(range + ':status ' + r.status); return; }
            var contentRange = 'bytes ' + first + '-' + (first + length - 1) + '/' + size;
            if (range && r.headers.get('Content-Range') !== contentRange) fails.push(range + ':' + r.headers.get('Content-Range'));
            var reader = r.body.getReader(), at = first, bad = 0;
            for (;;) {
              var next = await reader.read();
              if (next.done) break;
              var chunk = next.value, view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
              for (var p = (4096 - at % 4096) % 4096; p + 4 <= chunk.byteLength; p += 4096) {
                if (view.getUint32(p, true) !== (at + p) / 4096) bad++;
              }
              at += chunk.byteLength;
            }
            if (at - first !== length) fails.push(range + ':length ' + (at - first));
            if (bad) fails.push(range + ':blocks ' + bad);
          }
          await new Promise(function (done) { setTimeout(done, 1500); });
          try {
            if (turn === 0) {
              var all = [];
              for (var i = 0; i < 128; i++) {
                var start = i * 2 * mb + (i % 7) * 4096;
                all.push(read('bytes=' + start + '-' + (start + 16 * mb - 1), start, 16 * mb));
              }
              await Promise.all(all);
            } else {
              await read(null, 0, size);
              await read('bytes=' + 12288 + '-', 12288, size - 12288);
            }
          } catch (e) { fails.push('threw:' + e.message); }
          var colour = fails.length === 0 ? '\(green)' : '\(red)';
          document.documentElement.style.background = colour; document.body.style.background = colour;
          if (fails.length) window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:' + fails.slice(0, 5).join(',') }).catch(function () {});
          WebAppLocalServer.startupDidComplete();
        })();
        """

    /// Runs the shell on the rig until the page's reads are done (its acknowledged
    /// snapshot), polling its `VmHWM`; returns its peak growth after the first paint, in KiB.
    static func peakGrowth(_ rig: ReleaseRig, origin: [String], what: String) async throws -> Int {
        let shot = rig.tmp("shot.png")
        try? FileManager.default.removeItem(atPath: shot)
        let shell = try RunningShell(root: rig.root, exitAfter: 240, arguments: origin + ["--snapshot", shot], scratch: rig.tmp.path)
        try await shell.waitFor("the first paint", timeout: 60) { $0.contains { $0.event == "firstPaint" } }
        let baseline = try #require(shell.shellPeakKiB, "the shell's VmHWM at the first paint")
        var peak = baseline
        try await shell.waitFor("the page's reads (\(what))", timeout: 180) { events in
            if let now = shell.shellPeakKiB { peak = max(peak, now) }
            return events.contains { $0.event == "snapshot" }
        }
        if let now = shell.shellPeakKiB { peak = max(peak, now) }
        let run = try await shell.terminate()
        let failed = run.events.first { $0.action?.hasPrefix("failed:") == true }
        #expect(failed == nil, "\(what): \(failed?.action ?? "") \(failed?.message ?? "") \(run.summary)")
        #expect(!run.events.contains { $0.event == "error" }, "\(what): \(run.summary)")
        try await Self.expectColour(shot, Self.green)
        let growth = peak - baseline
        print("memory budget: \(what): VmHWM \(baseline / 1024) MiB at the first paint, \(peak / 1024) MiB after the reads (+\(growth / 1024) MiB)")
        #expect(growth < Self.memoryBudgetKiB, "\(what): the shell grew by \(growth / 1024) MiB (from \(baseline / 1024) MiB)")
        return growth
    }

    /// 128 parallel ranges of 16 MiB, then the 300 MB file whole and from `bytes=N-`, on
    /// `app://`; then the 128 ranges on the loopback origin: every answer right, the shell
    /// within its budget each time.
    @Test func parallelRangesAndLargeFilesStayWithinTheMemoryBudget() async throws {
        let rig = try await ReleaseRig(startupTimeout: 120, label: "shell-memory-budget")
        try await rig.publish("1.0.0", script: Self.bigReads, extra: ["big.bin": Self.bigFile()])
        try await rig.run(["install", "--root", rig.root])
        _ = try await Self.peakGrowth(rig, origin: [], what: "128 parallel 16 MiB ranges on app://")
        _ = try await Self.peakGrowth(rig, origin: [], what: "300 MB whole and from bytes=N- on app://")
        _ = try await Self.peakGrowth(rig, origin: ["--origin", "loopback"], what: "128 parallel 16 MiB ranges on the loopback origin")
    }
}
