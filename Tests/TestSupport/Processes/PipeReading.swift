import Foundation

extension FileHandle {
    /// Reads until end of file, retrying reads a signal interrupted.
    ///
    /// Foundation's `readDataToEndOfFile()` traps on `EINTR` (it wraps a throwing read in
    /// `try!`), and this test process does take signals while children exit, so every
    /// test that drains a child's pipe reads through this instead.
    public func readAllRetryingInterrupts() throws -> Data {
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if n == 0 { return result }
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            result.append(contentsOf: buffer[0..<n])
        }
    }
}
