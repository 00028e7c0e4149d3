import ClientFoundation
import Foundation

/// One run of a Debian tool (`dpkg-deb`, `dpkg-shlibdeps`, `objdump`) through
/// ``ChildProcess``: its output kept in files (no pipe can fill and stall it), at most
/// ``outputCap`` bytes of each read back, and its process group killed when it runs over
/// its time limit. `scratch` is no longer written to (the files are unlinked ones).
package struct ToolRun: Sendable {
    /// Bytes of standard output and standard error read back.
    package static let outputCap = 1 << 20

    package let tool: String
    package let arguments: [String]
    package var environment: [String: String] = [:]
    package var directory: String?
    package var timeout: Duration = .seconds(600)

    package init(tool: String, arguments: [String], environment: [String: String] = [:], directory: String? = nil, timeout: Duration = .seconds(600))
    {
        self.tool = tool
        self.arguments = arguments
        self.environment = environment
        self.directory = directory
        self.timeout = timeout
    }

    /// What the tool printed, when it exited 0.
    package struct Output: Sendable {
        package var standardOutput: String
        package var standardError: String
    }

    /// Runs the tool found on `PATH`.
    /// - Throws: ``PackageError`` `.toolFailed` when it is missing, exits non-zero (its
    ///   last line of standard error named), is killed, or runs over `timeout`.
    package func run(scratch: String) throws -> Output {
        guard let path = Self.find(tool) else {
            throw PackageError(.toolFailed, "\(tool) not found on PATH: install \(Self.debianPackage(of: tool))")
        }
        var env = ["LC_ALL": "C.UTF-8"]
        for (key, value) in environment { env[key] = value }
        // ChildProcess: posix_spawn (not Foundation's Process, whose run() overran readdir's
        // buffer past about 1,365 open descriptors), output in unlinked files read back up
        // to the cap, the tool's whole process group killed at the deadline.
        let child = ChildProcess(
            path, arguments, environment: env, directory: directory, input: .none,
            standardOutput: .memory(cap: Self.outputCap), standardError: .memory(cap: Self.outputCap),
            timeout: max(.zero, timeout))
        let ran: ChildProcess.Result
        do {
            ran = try child.runBlocking()
        } catch {
            throw PackageError(.toolFailed, "cannot run \(path): \(error)")
        }
        if ran.timedOut {
            // Killed outright: what it left is in the scratch folder, which goes anyway.
            throw PackageError(.toolFailed, "\(tool) ran over \(timeout.components.seconds) s and was stopped")
        }
        let output = Output(
            standardOutput: String(decoding: ran.standardOutput, as: UTF8.self),
            standardError: String(decoding: ran.standardError, as: UTF8.self))
        guard ran.termination == .exited(0) else {
            let last = output.standardError.split(separator: "\n").last.map(String.init) ?? "no message"
            throw PackageError(.toolFailed, "\(tool) failed (\(ran.termination)): \(last)")
        }
        return output
    }

    /// The executable named `tool` on `PATH` (or the standard Debian folders).
    static func find(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        return folders.map { $0 + "/" + tool }.first { access($0, X_OK) == 0 }
    }

    static func debianPackage(of tool: String) -> String {
        switch tool {
        case "dpkg-shlibdeps": return "dpkg-dev"
        case "objdump": return "binutils"
        case "gpg", "gpgconf": return "gpg"
        case "reprepro": return "reprepro"
        default: return "dpkg"
        }
    }
}
