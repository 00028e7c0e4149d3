import ClientFoundation
import DeviceSetup
import Foundation

extension DeviceConfig {
    /// Reads and validates `config.json` of a root: at most 1 MiB, not writable by other
    /// users (refused, as sshd's StrictModes refuses such files), every value in range and
    /// the URL rules of `URLPolicy` (checked at every load, not only at `init`).
    /// - Throws: ``UpdaterError`` `.configInvalid` (exit 78) naming the file and the reason.
    public static func load(_ layout: RootLayout) throws -> DeviceConfig {
        do {
            return try load(path: layout.config)
        } catch {
            throw UpdaterError(error)
        }
    }

    /// Writes `config.json` atomically.
    /// - Throws: ``UpdaterError`` `.invalidArgument` when a value is out of range (nothing is written).
    package func save(_ layout: RootLayout) throws {
        try AtomicFile.write(try rootBytes(), to: layout.config)
    }

    /// The bytes of `config.json` (``encoded()``), a value out of range said as an
    /// ``UpdaterError`` `.invalidArgument`.
    package func rootBytes() throws -> Data {
        do {
            return try encoded()
        } catch let error as DeviceSetupError {
            throw UpdaterError(error)
        }
    }
}

extension UpdaterError {
    /// A device setup's error as the updater's, with the same message, kind and cause.
    package init(_ error: DeviceSetupError) {
        let code: UpdaterErrorCode =
            switch error.code {
            case .invalidArgument: .invalidArgument
            case .notFound: .notFound
            default: .configInvalid
            }
        self.init(code, error.message, underlying: error.underlying)
    }
}
