import ClientFoundation
import Foundation
@preconcurrency import Glibc
import SignedManifest
import Synchronization

/// One run of a `--sign-command`: `/bin/sh -c CMD` on ``ChildProcess`` (`posix_spawn`, a
/// process group of its own), its standard output in a file of the sign folder that is
/// watched while it runs, so the whole group is killed as soon as it passes
/// ``CommandSigner/outputCap`` bytes (more is not a signature); at most that many bytes of
/// standard output and of standard error are read back; the group is killed when it runs
/// over `timeout`, or when the task is cancelled.
struct SignCommandRun: Sendable {
    let command: String
    let timeout: Duration

    /// What the command did.
    struct Outcome: Sendable {
        enum Ending: Sendable, Equatable {
            case exited(Int32)
            case signal(Int32)
            case timedOut
        }
        var ending: Ending
        /// Standard output, at most ``CommandSigner/outputCap`` bytes.
        var output: [UInt8] = []
        /// The command wrote more than ``CommandSigner/outputCap`` bytes on standard output.
        var outputOverflowed = false
        /// Standard error as one line, shortened (for the message).
        var errorText = ""
    }

    /// How often the size of standard output is looked at while the command runs: a
    /// command that floods it is killed within about this long.
    static let outputWatchInterval: DispatchTimeInterval = .milliseconds(10)

    /// Runs the command with `input` as its standard input and `environment` added; its
    /// standard output goes to a file beside the input, removed before it returns.
    func run(input: SignInputFile, environment: [String: String]) async throws -> Outcome {
        let outputPath = input.folder + "/signature"
        defer { unlink(outputPath) }
        let descriptor = try input.openForReading()
        var child = ChildProcess(
            "/bin/sh", ["-c", command], environment: environment, input: .fileDescriptor(descriptor),
            standardOutput: .file(outputPath), standardError: .memory(cap: CommandSigner.outputCap), timeout: timeout)
        child.onTimeout = nil
        let running: ChildProcess.Running
        do {
            running = try child.start()
            close(descriptor)
        } catch {
            close(descriptor)
            throw ReleaseSigningError(.signerUnavailable, "sign command '\(command)' cannot be run: \(error)", underlying: error)
        }
        let terminal = TerminalHandover.give(to: running.pid)
        defer { terminal?.takeBack() }
        let watch = OutputWatch(path: outputPath, running: running)
        let result = await withTaskCancellationHandler {
            await running.wait()
        } onCancel: {
            running.signal(SIGKILL)
        }
        watch.stop()
        let (output, size) = Self.readBack(outputPath)
        let ending: Outcome.Ending
        switch result.termination {
        case _ where result.timedOut: ending = .timedOut
        case .exited(let code): ending = .exited(code)
        case .signaled(let number): ending = .signal(number)
        }
        return Outcome(
            ending: ending, output: output, outputOverflowed: size > CommandSigner.outputCap || watch.fired,
            errorText: Self.oneLine(Array(result.standardError)))
    }

    /// The first ``CommandSigner/outputCap`` bytes of the file at `path`, and its size.
    private static func readBack(_ path: String) -> (bytes: [UInt8], size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return ([], 0) }
        defer { close(fd) }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        var bytes = [UInt8](repeating: 0, count: min(size, CommandSigner.outputCap))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress?.advanced(by: done), $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            done += n
        }
        return (Array(bytes.prefix(done)), size)
    }

    /// Standard error as one line for a message: lines joined with " / ", at most 300
    /// characters.
    static func oneLine(_ bytes: [UInt8]) -> String {
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let text = lines.joined(separator: " / ")
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }
}

/// Kills a running sign command's group once its standard output file passes
/// ``CommandSigner/outputCap`` bytes: looks every ``SignCommandRun/outputWatchInterval``
/// on a queue of its own (a busy cooperative pool cannot delay it) until ``stop()``.
final class OutputWatch: Sendable {
    private static let queue = DispatchQueue(label: "SignCommandRun.outputWatch")
    private let path: String
    private let running: ChildProcess.Running
    private struct State {
        var stopped = false
        var fired = false
    }
    private let state = Mutex(State())

    init(path: String, running: ChildProcess.Running) {
        self.path = path
        self.running = running
        schedule()
    }

    /// True when the output passed the cap and the group was killed for it.
    var fired: Bool { state.withLock { $0.fired } }

    /// Ends the watch (the command has ended).
    func stop() { state.withLock { $0.stopped = true } }

    private func schedule() {
        Self.queue.asyncAfter(deadline: .now() + SignCommandRun.outputWatchInterval) { [self] in
            var info = stat()
            let over = stat(path, &info) == 0 && Int(info.st_size) > CommandSigner.outputCap
            let (kill, again) = state.withLock { state -> (Bool, Bool) in
                guard !state.stopped else { return (false, false) }
                guard over else { return (false, true) }
                state.fired = true
                state.stopped = true
                return (true, false)
            }
            if kill { running.signal(SIGKILL) }  // the whole group; nothing once the command has ended
            if again { schedule() }
        }
    }
}
