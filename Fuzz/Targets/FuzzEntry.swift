import Foundation

// libFuzzer's entry points. One instrumented binary holds every target; CLIENTCTL_FUZZ_TARGET
// (set by Scripts/fuzz) picks one. Whichever `main` the link keeps — libFuzzer's own, or
// SwiftPM's `<module>_main`, which hands over to libFuzzer's driver — the same callbacks run.

/// libFuzzer's documented driver entry (`LLVMFuzzerRunDriver`, LLVM ≥ 11).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target chosen for this process, set once before the first input.
nonisolated(unsafe) private var selected: (any FuzzTarget.Type)?

/// Picks the target named by CLIENTCTL_FUZZ_TARGET (once); lists the targets and exits for
/// `--list` or when none is named.
private func selectTarget() {
    guard selected == nil else { return }
    let name = ProcessInfo.processInfo.environment["CLIENTCTL_FUZZ_TARGET"] ?? ""
    if name.isEmpty || CommandLine.arguments.dropFirst().first == "--list" {
        for target in FuzzTargets.all { print(target.name) }
        exit(name.isEmpty && CommandLine.arguments.count < 2 ? 64 : 0)
    }
    guard let target = FuzzTargets.named(name) else {
        FileHandleOutput.writeError("clientctl-fuzz: unknown target \(name) (CLIENTCTL_FUZZ_TARGET)\n")
        exit(64)
    }
    target.setUp()
    selected = target
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutableRawPointer?) -> CInt {
    selectTarget()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selectTarget()
    selected?.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

@_cdecl("clientctl_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    selectTarget()
    var count = argc
    var arguments = argv
    return withUnsafeMutablePointer(to: &count) { countPointer in
        withUnsafeMutablePointer(to: &arguments) { argumentsPointer in
            runFuzzerDriver(countPointer, argumentsPointer) { data, size in fuzzTestOneInput(data, size) }
        }
    }
}

enum FileHandleOutput {
    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

func abortProcess() -> Never {
    abort()
}
