import ClientFoundation
import Foundation
import Synchronization

/// A headless Chromium driven over the DevTools protocol, for tests that click and type
/// as a person would (https://chromedevtools.github.io/devtools-protocol/).
///
/// `--remote-debugging-pipe` makes Chromium read commands from its file descriptor 3 and
/// write answers and events to its descriptor 4, each a JSON message ended by a NUL byte.
/// The browser is started through `sh`, which opens two FIFOs on those descriptors; this
/// side writes one and reads the other (a thread of its own reads). Each tab
/// (``ChromiumTab``) is a target attached in flat mode: its commands carry its
/// `sessionId`. A tab of its own browser context has a cookie jar of its own.
public final class ChromiumDevTools: Sendable {
    private let process: ChildProcess.Running
    private let folder: String
    private let toBrowser: FileHandle
    private let inbox = Inbox()

    /// How long one command or one awaited event may take.
    public static let timeout: Duration = .seconds(60)

    /// Starts the browser with a fresh profile.
    /// - Throws: ``ChromiumError`` when `chromium` is not in `PATH` or does not start.
    public init() throws {
        guard Subprocess.isAvailable("chromium") else {
            throw ChromiumError("chromium is not in PATH: Scripts/test installs it (apt-get install chromium)")
        }
        folder = NSTemporaryDirectory() + "/chromium-cdp-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/profile", withIntermediateDirectories: true)
        for fifo in ["in", "out"] where mkfifo(folder + "/" + fifo, 0o600) != 0 {
            throw ChromiumError("mkfifo \(folder)/\(fifo): \(String(cString: strerror(errno)))")
        }
        let quoted = { (s: String) in "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command =
            "exec /usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check "
            + "--user-data-dir=\(quoted(folder + "/profile")) --remote-debugging-pipe 3<\(quoted(folder + "/in")) 4>\(quoted(folder + "/out"))"
        process = try ChildProcess("/bin/sh", ["-c", command], standardOutput: .discard, standardError: .file(folder + "/stderr")).start()
        // Each open waits for the shell to open the other end (it does before it execs).
        guard let writer = FileHandle(forWritingAtPath: folder + "/in") else {
            throw ChromiumError("cannot open \(folder)/in")
        }
        toBrowser = writer
        let reader = open(folder + "/out", O_RDONLY)
        guard reader >= 0 else { throw ChromiumError("cannot open \(folder)/out: \(String(cString: strerror(errno)))") }
        let inbox = inbox
        let thread = Thread { inbox.read(from: reader) }
        thread.start()
    }

    deinit {
        process.killIfRunning()
        try? toBrowser.close()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Ends the browser and removes its profile.
    public func close() {
        _ = process.stop(SIGTERM, within: 10)
        try? toBrowser.close()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Sends `method` with `params` (to a tab's `session`, or the browser) and returns the
    /// answer's `result`.
    /// - Throws: ``ChromiumError`` for an `error` answer, or no answer in ``timeout``.
    @discardableResult
    public func send(_ method: String, _ params: [String: Any] = [:], session: String? = nil) async throws -> [String: Any] {
        let id = inbox.nextID()
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        var bytes = try JSONSerialization.data(withJSONObject: message)
        bytes.append(0)
        let answer = try await inbox.answer(id: id, what: method) { try self.toBrowser.write(contentsOf: bytes) }
        guard let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any] else {
            throw ChromiumError("\(method): the answer is not an object")
        }
        if let error = object["error"] as? [String: Any] {
            throw ChromiumError("\(method): \(error["message"] ?? error)")
        }
        return object["result"] as? [String: Any] ?? [:]
    }

    /// Starts waiting for the next event `method` of `session`; await the result after the
    /// act that causes it.
    public func expect(_ method: String, session: String?) -> Task<Void, any Error> {
        let waiter = inbox.waiter(method: method, session: session)
        return Task { try await waiter.wait(within: Self.timeout, what: method) }
    }

    /// A new tab in a browser context of its own (its own cookies), showing `about:blank`.
    public func newTab() async throws -> ChromiumTab {
        let context = try await send("Target.createBrowserContext", ["disposeOnDetach": true])
        guard let contextID = context["browserContextId"] as? String else { throw ChromiumError("no browserContextId") }
        let target = try await send("Target.createTarget", ["url": "about:blank", "browserContextId": contextID])
        guard let targetID = target["targetId"] as? String else { throw ChromiumError("no targetId") }
        let attached = try await send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw ChromiumError("no sessionId") }
        let tab = ChromiumTab(tools: self, session: session)
        try await send("Page.enable", session: session)
        try await send("Runtime.enable", session: session)
        return tab
    }

    /// The messages from the browser: answers by id, events by method and session.
    final class Inbox: Sendable {
        struct State {
            var next = 0
            var answers: [Int: CheckedContinuation<Data, any Error>] = [:]
            var waiters: [EventWaiter] = []
            var closed = false
        }
        let state = Mutex(State())

        func nextID() -> Int {
            state.withLock {
                $0.next += 1
                return $0.next
            }
        }

        func answer(id: Int, what: String, send: () throws -> Void) async throws -> Data {
            let timeout = Deadline.after(ChromiumDevTools.timeout) { [weak self] in
                let waiting = self?.state.withLock { $0.answers.removeValue(forKey: id) }
                waiting?.resume(throwing: ChromiumError("\(what): no answer in \(ChromiumDevTools.timeout)"))
            }
            defer { timeout.cancel() }
            return try await withCheckedThrowingContinuation { continuation in
                let closed = state.withLock { s in
                    if !s.closed { s.answers[id] = continuation }
                    return s.closed
                }
                if closed { return continuation.resume(throwing: ChromiumError("\(what): the browser is gone")) }
                do {
                    try send()
                } catch {
                    if let waiting = state.withLock({ $0.answers.removeValue(forKey: id) }) {
                        waiting.resume(throwing: ChromiumError("\(what): cannot write to the browser: \(error)"))
                    }
                }
            }
        }

        func waiter(method: String, session: String?) -> EventWaiter {
            let waiter = EventWaiter(method: method, session: session)
            state.withLock { $0.waiters.append(waiter) }
            return waiter
        }

        /// Reads NUL-ended messages from `fd` until the browser closes it.
        func read(from fd: Int32) {
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 65_536) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                pending.append(contentsOf: buffer[0..<n])
                while let end = pending.firstIndex(of: 0) {
                    let message = pending[pending.startIndex..<end]
                    pending = Data(pending[(end + 1)...])
                    deliver(Data(message))
                }
            }
            Glibc.close(fd)
            let (answers, waiters) = state.withLock { s in
                s.closed = true
                defer {
                    s.answers = [:]
                    s.waiters = []
                }
                return (Array(s.answers.values), s.waiters)
            }
            for answer in answers { answer.resume(throwing: ChromiumError("the browser closed its pipe")) }
            for waiter in waiters { waiter.fail(ChromiumError("the browser closed its pipe")) }
        }

        private func deliver(_ message: Data) {
            guard let object = try? JSONSerialization.jsonObject(with: message) as? [String: Any] else { return }
            if let id = object["id"] as? Int {
                state.withLock { $0.answers.removeValue(forKey: id) }?.resume(returning: message)
            } else if let method = object["method"] as? String {
                let session = object["sessionId"] as? String
                let matched = state.withLock { s -> [EventWaiter] in
                    let hit = s.waiters.filter { $0.method == method && ($0.session == nil || $0.session == session) }
                    s.waiters.removeAll { w in hit.contains { $0 === w } }
                    return hit
                }
                for waiter in matched { waiter.fire() }
            }
        }
    }

    /// One awaited event: fired once.
    final class EventWaiter: Sendable {
        let method: String
        let session: String?
        private let outcome = Mutex<(done: Result<Void, ChromiumError>?, continuation: CheckedContinuation<Void, any Error>?)>((nil, nil))

        init(method: String, session: String?) {
            self.method = method
            self.session = session
        }

        func fire() { finish(.success(())) }
        func fail(_ error: ChromiumError) { finish(.failure(error)) }

        private func finish(_ result: Result<Void, ChromiumError>) {
            let continuation = outcome.withLock { o -> CheckedContinuation<Void, any Error>? in
                guard o.done == nil else { return nil }
                o.done = result
                defer { o.continuation = nil }
                return o.continuation
            }
            continuation?.resume(with: result.mapError { $0 as any Error })
        }

        func wait(within limit: Duration, what: String) async throws {
            let timeout = Deadline.after(limit) { [weak self] in
                self?.fail(ChromiumError("\(what): not seen in \(limit)"))
            }
            defer { timeout.cancel() }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let done = outcome.withLock { o -> Result<Void, ChromiumError>? in
                    if o.done == nil { o.continuation = continuation }
                    return o.done
                }
                if let done { continuation.resume(with: done.mapError { $0 as any Error }) }
            }
        }
    }
}

/// One tab of a ``ChromiumDevTools`` browser: navigate, read the DOM, click and type with
/// real input events.
public struct ChromiumTab: Sendable {
    let tools: ChromiumDevTools
    let session: String

    /// Opens `url` and returns once its `load` event fired.
    public func navigate(_ url: String) async throws {
        let loaded = tools.expect("Page.loadEventFired", session: session)
        let result = try await tools.send("Page.navigate", ["url": url], session: session)
        if let error = result["errorText"] as? String {
            loaded.cancel()
            throw ChromiumError("navigate \(url): \(error)")
        }
        try await loaded.value
    }

    /// The value of `expression` evaluated in the page (DevTools' evaluation is not subject
    /// to the page's Content-Security-Policy: it reads, the page runs no script of its own).
    public func evaluate(_ expression: String) async throws -> Any? {
        let result = try await tools.send("Runtime.evaluate", ["expression": expression, "returnByValue": true], session: session)
        if let exception = result["exceptionDetails"] as? [String: Any] {
            throw ChromiumError("evaluate \(expression): \(exception["text"] ?? exception)")
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// The page's text (`document.body.innerText`).
    public func text() async throws -> String { try await evaluate("document.body ? document.body.innerText : ''") as? String ?? "" }

    /// The page's HTML as serialized now.
    public func html() async throws -> String { try await evaluate("document.documentElement.outerHTML") as? String ?? "" }

    /// The page's URL.
    public func url() async throws -> String { try await evaluate("location.href") as? String ?? "" }

    /// The centre of the first element matching `selector`, in CSS pixels of the viewport
    /// (scrolled into view first).
    func centre(of selector: String) async throws -> (x: Double, y: Double) {
        let document = try await tools.send("DOM.getDocument", ["depth": 0], session: session)
        guard let root = (document["root"] as? [String: Any])?["nodeId"] as? Int else { throw ChromiumError("no document") }
        let found = try await tools.send("DOM.querySelector", ["nodeId": root, "selector": selector], session: session)
        guard let node = found["nodeId"] as? Int, node != 0 else { throw ChromiumError("no element matches \(selector)") }
        try await tools.send("DOM.scrollIntoViewIfNeeded", ["nodeId": node], session: session)
        let box = try await tools.send("DOM.getBoxModel", ["nodeId": node], session: session)
        guard let quad = (box["model"] as? [String: Any])?["content"] as? [Double], quad.count == 8 else {
            throw ChromiumError("\(selector) has no box")
        }
        return ((quad[0] + quad[2] + quad[4] + quad[6]) / 4, (quad[1] + quad[3] + quad[5] + quad[7]) / 4)
    }

    /// Clicks the first element matching `selector` with a real left-button press and release
    /// at its centre.
    public func click(_ selector: String) async throws {
        let (x, y) = try await centre(of: selector)
        for type in ["mouseMoved", "mousePressed", "mouseReleased"] {
            var params: [String: Any] = ["type": type, "x": x, "y": y]
            if type != "mouseMoved" {
                params["button"] = "left"
                params["clickCount"] = 1
            }
            try await tools.send("Input.dispatchMouseEvent", params, session: session)
        }
    }

    /// Clicks `selector` (a submit button, a link) and returns once the page it leads to loaded.
    public func clickAndWait(_ selector: String) async throws {
        let loaded = tools.expect("Page.loadEventFired", session: session)
        do {
            try await click(selector)
        } catch {
            loaded.cancel()
            throw error
        }
        try await loaded.value
    }

    /// Clicks the field `selector` and types `text` into it.
    public func type(_ selector: String, _ text: String) async throws {
        try await click(selector)
        try await tools.send("Input.insertText", ["text": text], session: session)
    }
}
