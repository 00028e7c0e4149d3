import Foundation

/// One accepted connection of a ``LoopbackHTTPServer``: reads requests, writes responses,
/// applies the response's delivery faults. Runs on its own thread, owns its descriptor.
struct LoopbackConnection {
    let server: LoopbackHTTPServer
    let fd: Int32
    let number: Int
    let wake: Int32
    private static let maxHead = 64 * 1024

    func run() {
        var buffer: [UInt8] = []
        var reset = false
        while true {
            guard let headBytes = readHead(&buffer) else { break }
            guard let head = LoopbackRequestParser.parse(headBytes[...]) else {
                _ = sendAll(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)[...])
                break
            }
            if let length = head.headers["content-length"].flatMap(Int.init), length > 0 {
                guard discard(length, buffer: &buffer) else { break }
            }
            let (request, slot) = server.record(head, connection: number)
            let response = server.respond(to: request)
            let outcome = send(response, for: request, slot: slot)
            if outcome.reset { reset = true }
            if !outcome.keepAlive { break }
        }
        server.closeConnection(fd, reset: reset)
    }

    // MARK: - Reading

    /// Reads up to and including the blank line; leftover bytes stay in `buffer`.
    private func readHead(_ buffer: inout [UInt8]) -> [UInt8]? {
        let crlf2: [UInt8] = [13, 10, 13, 10]
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                var i = max(0, searchFrom - 3)
                while i + 4 <= buffer.count {
                    if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
                        let head = Array(buffer[0..<i])
                        buffer.removeFirst(i + crlf2.count)
                        return head
                    }
                    i += 1
                }
                searchFrom = buffer.count
            }
            guard buffer.count < Self.maxHead, let chunk = receive() else { return nil }
            buffer.append(contentsOf: chunk)
        }
    }

    private func discard(_ count: Int, buffer: inout [UInt8]) -> Bool {
        var remaining = count
        let fromBuffer = min(remaining, buffer.count)
        buffer.removeFirst(fromBuffer)
        remaining -= fromBuffer
        while remaining > 0 {
            guard let chunk = receive() else { return false }
            if chunk.count > remaining {
                buffer.append(contentsOf: chunk[remaining...])
                remaining = 0
            } else {
                remaining -= chunk.count
            }
        }
        return true
    }

    private func receive() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            return Array(chunk[0..<n])
        }
    }

    // MARK: - Writing

    private struct Outcome {
        var keepAlive: Bool
        var reset: Bool
    }

    private func send(_ response: LoopbackResponse, for request: LoopbackRequest, slot: Int) -> Outcome {
        let delivery = response.delivery
        if delivery.dropWithoutResponse {
            server.update(slot, status: nil, sent: 0, finished: true)
            return Outcome(keepAlive: false, reset: true)
        }
        let noBody = request.method == "HEAD" || response.status == 304 || response.status == 204
        let bodyLength = noBody ? 0 : response.body.count
        let declared = response.declaredLength ?? response.body.count
        let faulty =
            delivery.stopAfter != nil || delivery.dripBytes != nil || response.omitContentLength
            || declared != response.body.count
        let wantsClose =
            request[header: "connection"]?.lowercased().contains("close") == true
            || (request.version == "HTTP/1.0" && request[header: "connection"]?.lowercased() != "keep-alive")
        let keepAlive = server.isKeepAlive && !faulty && !wantsClose

        var head = "HTTP/1.1 \(response.status) \(LoopbackResponse.reason(response.status))\r\n"
        for (name, value) in response.headers where name.lowercased() != "content-length" && name.lowercased() != "connection" {
            head += "\(name): \(value)\r\n"
        }
        if let explicit = response.header("Content-Length"), response.declaredLength == nil {
            head += "Content-Length: \(explicit)\r\n"
        } else if !response.omitContentLength && response.status != 304 && response.status != 204 {
            head += "Content-Length: \(declared)\r\n"
        }
        head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        guard sendAll(Array(head.utf8)[...]) else {
            server.update(slot, status: response.status, sent: 0, finished: false)
            return Outcome(keepAlive: false, reset: false)
        }
        server.update(slot, status: response.status, sent: 0, finished: false)

        let limit = min(bodyLength, delivery.stopAfter ?? Int64.max)
        let sent = sendBody(response.body, limit: limit, delivery: delivery, slot: slot, status: response.status)
        guard sent == limit else {
            server.update(slot, status: response.status, sent: sent, finished: false)
            return Outcome(keepAlive: false, reset: false)
        }
        server.update(slot, status: response.status, sent: sent, finished: true)
        if let stop = delivery.stopAfter, stop < bodyLength {
            switch delivery.ending {
            case .close: return Outcome(keepAlive: false, reset: false)
            case .reset: return Outcome(keepAlive: false, reset: true)
            case .stall:
                stall()
                return Outcome(keepAlive: false, reset: false)
            }
        }
        return Outcome(keepAlive: keepAlive, reset: false)
    }

    /// Sends up to `limit` body bytes; returns how many went out.
    private func sendBody(
        _ body: LoopbackResponse.Body, limit: Int64, delivery: LoopbackResponse.Delivery,
        slot: Int, status: Int
    ) -> Int64 {
        let chunkSize = delivery.dripBytes ?? 256 * 1024
        var sent: Int64 = 0
        let file: Int32
        var base: Int64 = 0
        switch body {
        case .empty:
            return 0
        case .data(let data):
            file = -1
            _ = data
        case .file(let path, let offset, _):
            file = open(path, O_RDONLY | O_CLOEXEC)
            if file < 0 { return 0 }
            base = offset
        }
        defer { if file >= 0 { close(file) } }
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while sent < limit {
            let want = Int(min(Int64(chunkSize), limit - sent))
            var got = 0
            switch body {
            case .data(let data):
                let start = data.startIndex + Int(sent)
                data.copyBytes(to: &chunk, from: start..<(start + want))
                got = want
            case .file:
                got = pread(file, &chunk, want, off_t(base + sent))
                if got <= 0 { return sent }
            case .empty:
                return sent
            }
            guard sendAll(chunk[0..<got]) else { return sent }
            sent += Int64(got)
            if delivery.dripBytes != nil {
                server.update(slot, status: status, sent: sent, finished: false)
                if sent < limit && !pause(delivery.dripInterval) { return sent }
            }
        }
        return sent
    }

    private func sendAll(_ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let n = bytes.withUnsafeBytes { buf in
                Glibc.send(fd, buf.baseAddress?.advanced(by: offset - bytes.startIndex), bytes.endIndex - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Sleeps `seconds`; false when the server is stopping.
    private func pause(_ seconds: Double) -> Bool {
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        let n = poll(&fds, 1, Int32(max(0, seconds * 1000)))
        return n == 0
    }

    /// Holds the connection open, sending nothing, until the client closes or the server stops.
    private func stall() {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, -1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 || fds[1].revents != 0 { return }
            if fds[0].revents != 0 {
                let r = recv(fd, &scratch, scratch.count, 0)
                if r <= 0 { return }
            }
        }
    }
}
