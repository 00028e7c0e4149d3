import ClientFoundation
import Foundation
import StrictJSON

/// The operators file: who may log in to the console, with which role, and their password
/// hashes. JSON, read strictly, written atomically with mode 0600:
///
/// ```json
/// {
///   "version": 1,
///   "operators": [
///     { "name": "alice", "role": "operator", "password": "$scrypt$ln=15,r=8,p=1$…$…" }
///   ]
/// }
/// ```
///
/// A change (``update(_:_:)``) is made under a lock on `<file>.lock`, so two `clientctl
/// operator` commands at once never lose one's change.
public struct OperatorFile: Sendable, Equatable {
    /// The accounts, sorted by name; names are unique.
    public private(set) var accounts: [OperatorAccount]

    /// A file without operators.
    public init() { accounts = [] }

    /// A file with `accounts` (sorted by name here).
    /// - Throws: ``ConsoleAccessError`` `.rejected` when two accounts have one name.
    public init(accounts: [OperatorAccount]) throws(ConsoleAccessError) {
        self.accounts = accounts.sorted { $0.name < $1.name }
        for (a, b) in zip(self.accounts, self.accounts.dropFirst()) where a.name == b.name {
            throw ConsoleAccessError(.rejected, "operator \(a.name) is listed twice")
        }
    }

    /// The largest operators file read, in bytes.
    public static let maxBytes = 1 << 20
    /// The most operators a file holds.
    public static let maxAccounts = 10_000
    /// How long ``update(_:_:)`` waits for another process's lock.
    static let lockWait: Duration = .seconds(10)

    /// The account named `name`, if any (names are compared exactly).
    public func account(named name: String) -> OperatorAccount? {
        accounts.first { $0.name == name }
    }

    /// Adds `account`; with `replacing`, an account of the same name is replaced (a new
    /// password, a new role), else refused.
    /// - Throws: ``ConsoleAccessError`` `.exists` when the name is taken and not `replacing`;
    ///   `.rejected` past ``maxAccounts``.
    public mutating func add(_ account: OperatorAccount, replacing: Bool = false) throws(ConsoleAccessError) {
        if let index = accounts.firstIndex(where: { $0.name == account.name }) {
            guard replacing else {
                throw ConsoleAccessError(
                    .exists, "operator \(account.name) exists already: add --replace to change its password or role, or remove it first")
            }
            accounts[index] = account
            return
        }
        guard accounts.count < Self.maxAccounts else {
            throw ConsoleAccessError(.rejected, "the operators file holds \(Self.maxAccounts) operators already, the most it may")
        }
        accounts.append(account)
        accounts.sort { $0.name < $1.name }
    }

    /// Removes the account named `name` and returns it.
    /// - Throws: ``ConsoleAccessError`` `.notFound` when there is none.
    @discardableResult
    public mutating func remove(named name: String) throws(ConsoleAccessError) -> OperatorAccount {
        guard let index = accounts.firstIndex(where: { $0.name == name }) else {
            throw ConsoleAccessError(.notFound, "no operator \(Quoting.quoted(name)) in the operators file")
        }
        return accounts.remove(at: index)
    }

    /// The account that `name` and `password` log in as, or nil. An unknown name costs the
    /// same scrypt computation as a known one, so the time a refusal takes does not say
    /// whether the name exists.
    public func authenticate(name: String, password: [UInt8]) -> OperatorAccount? {
        guard let account = account(named: name) else {
            _ = PasswordHash.verify(password, Self.decoy)
            return nil
        }
        return PasswordHash.verify(password, account.passwordHash) ? account : nil
    }

    /// A hash no password matches (its hash bytes are not scrypt's output for any password
    /// anyone knows), at the standard cost: what an unknown name is checked against.
    private static let decoy: String = {
        let salt = SecretBytes.base64(SecretBytes.random(PasswordHash.saltBytes))
        let hash = SecretBytes.base64(SecretBytes.random(PasswordHash.hashBytes))
        let cost = PasswordHash.standard
        return "$scrypt$ln=\(cost.log2N),r=\(cost.r),p=\(cost.p)$\(salt)$\(hash)"
    }()

    // MARK: - Reading and writing

    /// The operators file at `path`.
    /// - Throws: ``ConsoleAccessError`` `.notFound` when it does not exist, `.rejected` when
    ///   it is not an operators file (naming what is wrong), `.io` when it cannot be read.
    public static func load(_ path: String) throws(ConsoleAccessError) -> OperatorFile {
        guard let data = try BoundedFile.read(path, cap: maxBytes, code: ConsoleAccessErrorCode.io, tooLarge: .rejected) else {
            throw ConsoleAccessError(.notFound, "operators file \(path) does not exist: make it with clientctl operator add")
        }
        return try parse(data, source: path)
    }

    /// Changes the operators file at `path` (an empty one when it does not exist yet) under
    /// its lock: reads it, lets `body` change it, and writes it back atomically (mode 0600)
    /// when it changed. What `body` throws leaves the file as it was.
    /// - Throws: what `body` throws; ``ConsoleAccessError`` `.busy` when another process
    ///   holds the lock for 10 seconds, `.io` when the file cannot be written, and what
    ///   ``load(_:)`` throws.
    @discardableResult
    public static func update<T>(_ path: String, _ body: (inout OperatorFile) throws -> T) throws -> T {
        try update(path, lockWait: lockWait, body)
    }

    /// ``update(_:_:)`` waiting at most `lockWait` for the lock.
    @discardableResult
    static func update<T>(
        _ path: String, lockWait: Duration, _ body: (inout OperatorFile) throws -> T
    ) throws -> T {
        let lockPath = path + ".lock"
        let lock: Flock?
        do {
            lock = try Flock.waiting(lockPath, .file, for: lockWait)
        } catch {
            let why: String
            switch error {
            case .cannotOpen(let code), .cannotLock(let code): why = String(cString: strerror(code))
            case .symlink: why = "it is a symbolic link"
            case .notRegularFile: why = "it is not a regular file"
            }
            throw ConsoleAccessError(.io, "cannot lock the operators file with \(lockPath): \(why)", underlying: error)
        }
        guard let lock else {
            throw ConsoleAccessError(.busy, "\(lockPath) is locked by another process: try again when it is done")
        }
        defer { lock.release() }
        var file = OperatorFile()
        do {
            file = try load(path)
        } catch {
            guard error.code == .notFound else { throw error }
        }
        let before = file
        let result = try body(&file)
        if file != before || !FileManager.default.fileExists(atPath: path) {
            do {
                try AtomicFile.write(Data(file.encoded()), to: path, mode: 0o600)
            } catch {
                throw ConsoleAccessError(.io, "cannot write the operators file: \(error)", underlying: error)
            }
        }
        return result
    }

    /// The file's JSON text (what ``update(_:_:)`` writes).
    public func encoded() -> [UInt8] {
        let list: [JSONValue] = accounts.map { a in
            .object(["name": .string(a.name), "role": .string(a.role.rawValue), "password": .string(a.passwordHash)])
        }
        return JSONPrettyPrinter.render(.object(["version": .integer(1), "operators": .array(list)]))
    }

    /// Parses an operators file's bytes; `source` names it in errors.
    /// - Throws: ``ConsoleAccessError`` `.rejected` naming the first thing wrong.
    public static func parse(_ bytes: some Collection<UInt8>, source: String) throws(ConsoleAccessError) -> OperatorFile {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 4), source: source)
        } catch {
            throw ConsoleAccessError(.rejected, "\(error)", underlying: error)
        }
        func refuse(_ why: String) -> ConsoleAccessError {
            ConsoleAccessError(.rejected, "\(source) is not an operators file: \(why)")
        }
        if let unknown = object.keys.first(where: { !["version", "operators"].contains($0) }) {
            throw refuse("unknown field \(Quoting.quoted(unknown))")
        }
        guard object["version"]?.integerValue == 1 else { throw refuse("\"version\" must be 1") }
        guard let list = object["operators"]?.arrayValue else { throw refuse("\"operators\" must be an array") }
        guard list.count <= maxAccounts else { throw refuse("more than \(maxAccounts) operators") }
        var accounts: [OperatorAccount] = []
        for (k, item) in list.enumerated() {
            let at = "operator \(k + 1)"
            guard let entry = item.objectValue else { throw refuse("\(at) is not an object") }
            if let unknown = entry.keys.first(where: { !["name", "role", "password"].contains($0) }) {
                throw refuse("\(at) has an unknown field \(Quoting.quoted(unknown))")
            }
            guard let name = entry["name"]?.stringValue, OperatorAccount.isValid(name: name) else {
                throw refuse("\(at)'s name is not 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'")
            }
            guard let roleName = entry["role"]?.stringValue, let role = OperatorRole(rawValue: roleName) else {
                throw refuse("operator \(name)'s role is not viewer or operator")
            }
            guard let hash = entry["password"]?.stringValue, PasswordHash.isWellFormed(hash) else {
                throw refuse("operator \(name)'s password is not a $scrypt$ hash within bounds (set it again with operator add --replace)")
            }
            accounts.append(try OperatorAccount(name: name, role: role, passwordHash: hash))
        }
        do {
            return try OperatorFile(accounts: accounts)
        } catch {
            throw refuse(error.message)
        }
    }
}
