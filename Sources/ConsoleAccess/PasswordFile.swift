import ClientFoundation
import Foundation

/// A password given in a file (`--password-file`), never on the command line, where `ps`
/// and the shell's history would show it: one line, whose trailing newline (`\n` or
/// `\r\n`) is not part of the password.
public enum PasswordFile {
    /// The largest password file read, in bytes.
    public static let maxBytes = PasswordHash.maxPasswordBytes + 2

    /// The password in the file at `path`, or on standard input when `path` is `-`.
    /// - Throws: ``ConsoleAccessError`` `.notFound` when the file does not exist; `.rejected`
    ///   when it is empty, holds more than one line or is larger than ``maxBytes``; `.io`
    ///   when it cannot be read. No message holds a byte of the password.
    public static func read(_ path: String) throws(ConsoleAccessError) -> [UInt8] {
        let data: Data
        let name = path == "-" ? "the password on standard input" : "password file \(path)"
        if path == "-" {
            data = FileHandle.standardInput.readData(ofLength: maxBytes + 1)
            guard data.count <= maxBytes else {
                throw ConsoleAccessError(.rejected, "\(name) is longer than \(maxBytes) bytes: a password is one line")
            }
        } else {
            guard let read = try BoundedFile.read(path, cap: maxBytes, code: ConsoleAccessErrorCode.io, tooLarge: .rejected) else {
                throw ConsoleAccessError(.notFound, "\(name) does not exist")
            }
            data = read
        }
        return try password(in: [UInt8](data), name: name)
    }

    /// The password in `bytes`: one line, its trailing `\n` or `\r\n` dropped.
    static func password(in bytes: [UInt8], name: String) throws(ConsoleAccessError) -> [UInt8] {
        var line = bytes[...]
        if line.last == 0x0A {
            line = line.dropLast()
            if line.last == 0x0D { line = line.dropLast() }
        }
        guard !line.isEmpty else { throw ConsoleAccessError(.rejected, "\(name) is empty: write the password on its one line") }
        guard !line.contains(0x0A), !line.contains(0x0D) else {
            throw ConsoleAccessError(.rejected, "\(name) holds more than one line: write the password alone on one line")
        }
        guard line.count <= PasswordHash.maxPasswordBytes else {
            throw ConsoleAccessError(.rejected, "\(name) holds a password longer than \(PasswordHash.maxPasswordBytes) bytes")
        }
        return Array(line)
    }
}
