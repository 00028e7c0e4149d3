import ClientFoundation
import Foundation
@preconcurrency import Glibc
internal import Subprocess
import Synchronization

/// One run of a `--sign-command`: `/bin/sh -c CMD` in a process group of its own, its
/// standard output and standard error read while it runs (at most
/// ``CommandSigner/outputCap`` bytes of each kept), the whole group killed when it runs
/// over `timeout` or writes more than a signature can be.
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

    /// Runs the command with `input` as its standard input and `environment` added.
    func run(input: SignInputFile, environment: [Environment.Key: String?]) async throws -> Outcome {
        let descriptor = try input.openForReading()
        let group = ProcessGroup()
        return try await withThrowingTaskGroup(of: Outcome?.self) { tasks in
            tasks.addTask { try await self.execute(descriptor, environment: environment, group: group) }
            tasks.addTask {
                try await Task.sleep(for: self.timeout)
                return nil
            }
            let first: Outcome?
            do {
                first = try await tasks.next() ?? nil
            } catch let error as SignedManifestError {
                throw error
            } catch {
                throw SignedManifestError(
                    .signerUnavailable, "sign command '\(command)' cannot be run: \(error)", underlying: error)
            }
            if let outcome = first {
                tasks.cancelAll()
                return outcome
            }
            // Time is up: kill the whole group (grandchildren too); the run then ends as the
            // pipes close, with what the command said on standard error.
            group.kill()
            tasks.cancelAll()
            let late = (try? await tasks.next()) ?? nil
            return Outcome(ending: .timedOut, errorText: late?.errorText ?? "")
        }
    }

    private func execute(_ descriptor: Int32, environment: [Environment.Key: String?], group: ProcessGroup) async throws -> Outcome {
        var options = PlatformOptions()
        options.processGroupID = 0  // a group of its own, led by the shell
        // When this task is cancelled before the command ends, its whole group is killed.
        options.teardownSequence = [.send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .seconds(2))]
        let result = try await Subprocess.run(
            .path("/bin/sh"), arguments: ["-c", command], environment: .inherit.updating(environment),
            platformOptions: options, input: .fileDescriptor(.init(rawValue: descriptor), closeAfterSpawningProcess: true),
            output: .sequence, error: .sequence
        ) { execution in
            let leader = execution.processIdentifier.value
            group.record(leader)
            let terminal = TerminalHandover.give(to: leader)
            defer { terminal?.takeBack() }
            async let error = Self.collect(execution.standardError, onOverflow: {})
            let output = try await Self.collect(execution.standardOutput, onOverflow: { group.kill() })
            return (output, try await error)
        }
        let (output, error) = result.closureResult
        let ending: Outcome.Ending
        switch result.terminationStatus {
        case .exited(let code): ending = .exited(code)
        case .signaled(let number): ending = .signal(number)
        }
        return Outcome(ending: ending, output: output.bytes, outputOverflowed: output.overflowed, errorText: Self.oneLine(error.bytes))
    }

    /// The first ``CommandSigner/outputCap`` bytes of `stream`. Past the cap `onOverflow`
    /// runs once (for standard output it kills the group) and the rest is read and
    /// dropped, so the command never blocks on a full pipe.
    private static func collect(
        _ stream: SubprocessOutputSequence, onOverflow: @Sendable () -> Void
    ) async throws -> (bytes: [UInt8], overflowed: Bool) {
        var bytes: [UInt8] = []
        var overflowed = false
        for try await buffer in stream {
            if overflowed { continue }
            buffer.withUnsafeBytes { bytes.append(contentsOf: $0) }
            if bytes.count > CommandSigner.outputCap {
                bytes.removeLast(bytes.count - CommandSigner.outputCap)
                overflowed = true
                onOverflow()
            }
        }
        return (bytes, overflowed)
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

/// The process group of a running sign command (its leader's pid once it started).
final class ProcessGroup: Sendable {
    private let leader = Mutex<pid_t?>(nil)

    func record(_ pid: pid_t) { leader.withLock { $0 = pid } }

    /// SIGKILL to every process of the group.
    func kill() {
        guard let pid = leader.withLock({ $0 }), pid > 0 else { return }
        _ = Glibc.kill(-pid, SIGKILL)
    }
}
