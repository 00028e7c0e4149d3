// transport-bench: the client side of Scripts/bench/transport.
//
//   transport-bench get URL OUT             DefaultTransport (sockets for http:), body to OUT
//   transport-bench get-urlsession URL OUT  URLSessionTransport, body to OUT
//   transport-bench download URL OUT        Downloader: O_EXCL file, SHA-256 while writing, fsync
//
// Prints the SHA-256 (download mode) on stdout; exits 1 with a message on failure.
import ClientUpdater
import Foundation

let args = CommandLine.arguments
guard args.count == 4, let url = URL(string: args[2]) else {
    FileHandle.standardError.write(Data("usage: transport-bench get|download URL OUT\n".utf8))
    exit(64)
}
let out = args[3]

/// Writes chunks to a descriptor (the sink is called serially).
final class FileSink: @unchecked Sendable {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    func write(_ chunk: UnsafeRawBufferPointer) throws { try AtomicFile.writeAll(fd: fd, bytes: chunk, path: out) }
}

do {
    switch args[1] {
    case "get", "get-urlsession":
        let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UpdaterError.io("cannot create", path: out, errno: errno) }
        let sink = FileSink(fd)
        let transport: any Transport = args[1] == "get" ? DefaultTransport() : URLSessionTransport()
        let response = try await transport.get(TransportRequest(url: url)) { try sink.write($0) }
        close(fd)
        guard response.status == 200 else { throw UpdaterError.httpStatus(url, response.status) }
    case "download":
        unlink(out)
        let result = try await Downloader(retry: .never).download(url, to: out)
        print(result.digest)
    default:
        FileHandle.standardError.write(Data("unknown mode \(args[1])\n".utf8))
        exit(64)
    }
} catch let error as UpdaterError {
    FileHandle.standardError.write(Data("transport-bench: \(error.message)\n".utf8))
    exit(1)
}
