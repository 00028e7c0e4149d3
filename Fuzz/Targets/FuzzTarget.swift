/// One fuzz target: a parser that reads outside input, and the property its output must keep.
///
/// `run` gets the fuzzer's bytes. It returns normally when the input was refused the way the
/// parser documents (a typed error) or accepted with its property intact; it calls
/// ``FuzzFinding/fail(_:_:)`` (which aborts, so libFuzzer saves the reproducer) when a
/// property is broken.
protocol FuzzTarget {
    /// The name `Scripts/fuzz` knows the target by (also its corpus and dictionary folder).
    static var name: String { get }
    /// Called once per process before the first input.
    static func setUp()
    static func run(_ data: [UInt8])
}

extension FuzzTarget {
    static func setUp() {}
}

/// A broken property: prints what broke and aborts the process.
enum FuzzFinding {
    static func fail(_ target: String, _ what: String) -> Never {
        let line = "FUZZ FINDING [\(target)]: \(what)\n"
        FileHandleOutput.writeError(line)
        abortProcess()
    }
}

/// Every target, in the order `Scripts/fuzz --list` prints them.
enum FuzzTargets {
    nonisolated(unsafe) static let all: [any FuzzTarget.Type] = [
        StrictJSONTarget.self,
        ReportBatchTarget.self,
        CanonicalJSONTarget.self,
        ManifestTarget.self,
        ReleaseIndexTarget.self,
        ExtractionTarget.self,
        MeteorManifestTarget.self,
        RuntimeConfigTarget.self,
        ByteRangeTarget.self,
        HeadInjectorTarget.self,
        RequestHeadTarget.self,
        ZstdPatchTarget.self,
        FileListTarget.self,
    ]

    static func named(_ name: String) -> (any FuzzTarget.Type)? {
        all.first { $0.name == name }
    }
}
