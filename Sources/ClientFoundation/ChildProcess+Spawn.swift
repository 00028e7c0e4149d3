import Foundation

extension ChildProcess {
    /// The descriptors a child gets as 0, 1 and 2, and the files its output is read back from.
    final class Streams: Sendable {
        /// Descriptors for the child's 0, 1 and 2 (closed in the parent once it started).
        let childDescriptors: [Int32]
        /// For ``Output/memory(cap:)``: the descriptor to read back from, and the cap.
        private let outputBack: (fd: Int32, cap: Int)?
        private let errorBack: (fd: Int32, cap: Int)?

        init(input: Input, output: Output, error: Output) throws {
            var opened: [Int32] = []
            do {
                let stdin: Int32
                switch input {
                case .none: stdin = try Self.open("/dev/null", O_RDONLY)
                case .data(let data): stdin = try Self.anonymousFile(holding: data)
                case .fileDescriptor(let fd): stdin = try Self.check(dup(fd), "dup")
                }
                opened.append(stdin)
                let (out, outBack) = try Self.open(output, standard: 1)
                opened.append(out)
                let (err, errBack) = try Self.open(error, standard: 2)
                opened.append(err)
                childDescriptors = opened
                outputBack = outBack
                errorBack = errBack
            } catch {
                for fd in opened { Glibc.close(fd) }
                throw error
            }
        }

        /// Closes the parent's copies of the child's descriptors (the read-back files stay open).
        func closeChildEnds() {
            for fd in childDescriptors where fd != outputBack?.fd && fd != errorBack?.fd { Glibc.close(fd) }
        }

        /// Closes the read-back files (after ``closeChildEnds()``: each descriptor is closed
        /// once, never a number another thread may have opened since).
        func close() {
            var backs = Set<Int32>()
            if let outputBack { backs.insert(outputBack.fd) }
            if let errorBack { backs.insert(errorBack.fd) }
            for fd in backs { Glibc.close(fd) }
        }

        func readOutput() -> (Data, Bool) { Self.readBack(outputBack) }
        func readError() -> (Data, Bool) { Self.readBack(errorBack) }

        private static func readBack(_ back: (fd: Int32, cap: Int)?) -> (Data, Bool) {
            guard let back else { return (Data(), false) }
            var info = stat()
            let size = fstat(back.fd, &info) == 0 ? Int(info.st_size) : 0
            let count = min(size, back.cap)
            var data = Data(count: count)
            var done = 0
            data.withUnsafeMutableBytes { buffer in
                while done < count {
                    let n = pread(back.fd, buffer.baseAddress?.advanced(by: done), count - done, off_t(done))
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    done += n
                }
            }
            return (data.prefix(done), size > back.cap)
        }

        private static func open(_ output: Output, standard: Int32) throws -> (Int32, (fd: Int32, cap: Int)?) {
            switch output {
            case .discard: return (try open("/dev/null", O_WRONLY), nil)
            case .inherit: return (try check(dup(standard), "dup"), nil)
            case .file(let path): return (try open(path, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600), nil)
            case .memory(let cap):
                let fd = try anonymousFile(holding: Data())
                return (fd, (fd, max(0, cap)))
            }
        }

        private static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws -> Int32 {
            try check(Glibc.open(path, flags | O_CLOEXEC, mode), "open \(path)")
        }

        /// A file with no name in the temporary folder, holding `data`, positioned at 0.
        private static func anonymousFile(holding data: Data) throws -> Int32 {
            let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            // A named file unlinked at once (the child closes every inherited descriptor
            // above 2, so the moment without O_CLOEXEC leaks it into no other child).
            var template = Array((folder + "/clientctl-child-XXXXXX").utf8CString)
            let fd = try check(mkstemp(&template), "mkstemp in \(folder)")
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            unlink(String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            var done = 0
            let failed = data.withUnsafeBytes { bytes -> Bool in
                while done < bytes.count {
                    let n = write(fd, bytes.baseAddress?.advanced(by: done), bytes.count - done)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return true }
                    done += n
                }
                return false
            }
            if failed || lseek(fd, 0, SEEK_SET) != 0 {
                let error = errno
                Glibc.close(fd)
                throw SpawnError(executable: "a temporary file in \(folder)", errno: error)
            }
            return fd
        }

        /// `fd`, moved above 2 if it is one of them (this process's 0-2 were closed): the
        /// child's dup2 onto 0, 1 and 2 in turn must not overwrite a descriptor still to come.
        private static func check(_ fd: Int32, _ what: String) throws -> Int32 {
            guard fd >= 0 else { throw SpawnError(executable: what, errno: errno) }
            guard fd < 3 else { return fd }
            let moved = fcntl(fd, F_DUPFD_CLOEXEC, 3)
            let error = errno
            Glibc.close(fd)
            guard moved >= 0 else { throw SpawnError(executable: what, errno: error) }
            return moved
        }
    }

    /// `posix_spawn` with the child in a process group of its own, default signal handling
    /// and an empty signal mask, descriptors 0-2 from `descriptors` and every other closed.
    enum Spawn {
        private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

        /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29) and `…_addclosefrom_np`
        /// (2.34), which Swift's Glibc module does not declare (they need `_GNU_SOURCE`).
        private static let addChdir: AddChdir? = symbol("posix_spawn_file_actions_addchdir_np")
        private static let addClosefrom: AddClosefrom? = symbol("posix_spawn_file_actions_addclosefrom_np")

        private static func symbol<T>(_ name: String) -> T? {
            guard let handle = dlopen(nil, RTLD_NOW), let found = dlsym(handle, name) else { return nil }
            return unsafeBitCast(found, to: T.self)
        }

        static func spawn(path: String, arguments: [String], environment: [String], directory: String?, descriptors: [Int32]) throws -> Int32 {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }

            for (target, fd) in descriptors.enumerated() {
                let failed = posix_spawn_file_actions_adddup2(&actions, fd, Int32(target))
                guard failed == 0 else { throw SpawnError(executable: path, errno: failed) }
            }
            if let directory {
                guard let addChdir else { throw SpawnError(executable: path, errno: ENOSYS) }
                let failed = directory.withCString { addChdir(&actions, $0) }
                guard failed == 0 else { throw SpawnError(executable: path, errno: failed) }
            }
            // Every descriptor above 2 closed in the child (close_range(2)); the parent's own
            // are O_CLOEXEC already, this also covers those opened without it.
            guard let addClosefrom else { throw SpawnError(executable: path, errno: ENOSYS) }
            let closing = addClosefrom(&actions, 3)
            guard closing == 0 else { throw SpawnError(executable: path, errno: closing) }

            var noSignals = sigset_t()
            sigemptyset(&noSignals)
            posix_spawnattr_setsigmask(&attributes, &noSignals)
            var defaults = sigset_t()
            sigfillset(&defaults)
            sigdelset(&defaults, SIGKILL)
            sigdelset(&defaults, SIGSTOP)
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            posix_spawnattr_setpgroup(&attributes, 0)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

            let argv = arguments.map { strdup($0) } + [nil]
            let envp = environment.map { strdup($0) } + [nil]
            defer {
                for pointer in argv { free(pointer) }
                for pointer in envp { free(pointer) }
            }
            var pid: pid_t = 0
            let failed = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
            guard failed == 0 else { throw SpawnError(executable: path, errno: failed) }
            return pid
        }
    }
}
