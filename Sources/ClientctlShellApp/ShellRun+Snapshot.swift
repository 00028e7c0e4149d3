import Foundation

extension ShellRun {
    /// `--snapshot`: a PNG of the view after every acknowledged start-up and every ended
    /// trial, replacing the file atomically (main thread; a request during a snapshot
    /// takes another one after it).
    func takeSnapshot(_ view: ShellView) {
        guard let path = options.snapshot else { return }
        let busy = state.withLock { state in
            defer { state.snapshotBusy = true }
            if state.snapshotBusy { state.snapshotAgain = true }
            return state.snapshotBusy
        }
        guard !busy else { return }
        let temporary = path + ".tmp-\(getpid())"
        view.snapshot(to: temporary) { [self] failure in
            if let failure {
                Self.printError(failure)
                log.emit("error", ["message": failure])
            } else if rename(temporary, path) != 0 {
                let message = "cannot write \(path): \(String(cString: strerror(errno)))"
                Self.printError(message)
                log.emit("error", ["message": message])
            } else {
                log.emit("snapshot", ["path": path, "version": view.pageVersion ?? ""])
            }
            let again = state.withLock { state in
                defer { (state.snapshotBusy, state.snapshotAgain) = (false, false) }
                return state.snapshotAgain
            }
            if again { takeSnapshot(view) }
        }
    }
}
