import ClientFoundation
import Foundation

// The repository's state: `conf/clientctl.json`, read and merged with a command's settings.
extension AptRepository {
    /// The repository's state file, or `nil` when `repo` is missing or an empty folder.
    /// - Throws: `.notARepository` for a file, or a folder with other things in it.
    static func openState(_ repo: String) throws -> State? {
        var st = stat()
        guard lstat(repo, &st) == 0 else { return nil }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw PackageError(.notARepository, "--repo \(repo) is not a folder") }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: repo)) ?? []
        if names.isEmpty { return nil }
        let path = repo + "/" + stateFile
        guard let data = try? BoundedFile.read(path, cap: 1 << 20, code: PackageErrorCode.notARepository),
            let state = try? JSONDecoder().decode(State.self, from: data), state.format == format
        else {
            throw PackageError(
                .notARepository, "--repo \(repo) holds files but no \(stateFile): not a repository clientctl repo made, left as it is")
        }
        return state
    }

    /// `phases` with `package` of `suite` at `percent`.
    static func setting(_ phases: [String: [String: Int]]?, suite: String, package: String, to percent: Int) -> [String: [String: Int]] {
        var phases = phases ?? [:]
        phases[suite, default: [:]][package] = percent
        return phases
    }

    static func merged(_ state: State?, suite: String, settings: Settings) -> State {
        var state = state ?? State(format: format, origin: "clientctl", validForDays: 7, suites: [])
        if !state.suites.contains(suite) { state.suites = (state.suites + [suite]).sorted() }
        if let origin = settings.origin { state.origin = origin }
        if let days = settings.validForDays { state.validForDays = days }
        return state
    }
}
