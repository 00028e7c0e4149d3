import AuthenticatedTime
import ClientFoundation

extension RoughtimeQuorum {
    /// Queries every server at once (each with ``RoughtimeClient/query(_:timeout:)``, bounded
    /// by `timeout`) and decides with AuthenticatedTime's pure
    /// `RoughtimeQuorum.decide(answers:failures:quorum:at:reading:)` on the clocks read once
    /// all are in. A server without a verified answer is one line of the failures (its error's
    /// message, prefixed with the server when it does not name it).
    /// - Throws: AuthenticatedTime's `AuthenticatedTimeErrorCode.noQuorum` naming each server
    ///   and why, when fewer than `quorum` verified answers overlap.
    public static func query(_ servers: [RoughtimeServer], quorum: Int, timeout: Duration) async throws -> AuthenticatedTime {
        let results = await withTaskGroup(of: (Int, Result<RoughtimeAnswer, any Error>).self) { group in
            for (i, server) in servers.enumerated() {
                group.addTask {
                    do { return (i, .success(try await RoughtimeClient.query(server, timeout: timeout))) } catch { return (i, .failure(error)) }
                }
            }
            var results: [(Int, Result<RoughtimeAnswer, any Error>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var answers: [RoughtimeAnswer] = []
        var failures: [String] = []
        for (server, result) in zip(servers, results) {
            switch result {
            case .success(let answer): answers.append(answer)
            case .failure(let error as any ClientctlError):
                failures.append(error.message.hasPrefix("\(server)") ? error.message : "\(server): \(error.message)")
            case .failure(let error): failures.append("\(server): \(error)")
            }
        }
        let instant = ContinuousClock.now
        return try decide(answers: answers, failures: failures, quorum: quorum, at: instant, reading: .now())
    }
}
