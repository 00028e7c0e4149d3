import Foundation

/// One run of a Debian tool (`dpkg-deb`, `dpkg-shlibdeps`, `objdump`): its output kept in
/// files (no pipe can fill and stall it), at most ``outputCap`` bytes of each read back,
/// and the process killed when it runs over its time limit.
package struct ToolRun: Sendable {
    /// Bytes of standard output and standard error read back.
    package static let outputCap = 1 << 20

    package let tool: String
    package let arguments: [String]
    package var environment: [String: String] = [:]
    package var directory: String?
    package var timeout: Double = 600

    package init(tool: String, arguments: [String], environment: [String: String] = [:], directory: String? = nil, timeout: Double = 600) {
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
        let outPath = scratch + "/.\(tool).out"
        let errPath = scratch + "/.\(tool).err"
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["LC_ALL"] = "C.UTF-8"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardInput = FileHandle.nullDevice
        guard let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath) else {
            throw PackageError(.io, "cannot create \(outPath)")
        }
        process.standardOutput = out
        process.standardError = err
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        do {
            try process.run()
        } catch {
            throw PackageError(.toolFailed, "cannot run \(path): \(error.localizedDescription)")
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            // Killed outright: what it left is in the scratch folder, which goes anyway.
            kill(process.processIdentifier, SIGKILL)
            _ = done.wait(timeout: .now() + 10)
            throw PackageError(.toolFailed, "\(tool) ran over \(Int(timeout)) s and was stopped")
        }
        try? out.close()
        try? err.close()
        let output = Output(standardOutput: Self.read(outPath), standardError: Self.read(errPath))
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let last = output.standardError.split(separator: "\n").last.map(String.init) ?? "no message"
            let how = process.terminationReason == .exit ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)"
            throw PackageError(.toolFailed, "\(tool) failed (\(how)): \(last)")
        }
        return output
    }

    static func read(_ path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: outputCap)) ?? nil
        return String(decoding: data ?? Data(), as: UTF8.self)
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
        default: return "dpkg"
        }
    }
}
