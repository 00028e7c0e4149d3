import Foundation

/// The bound of a hang, in one place: a wait for an event races a deadline that only ends
/// the test when the event never comes. It measures nothing, and nothing waits for it to
/// pass (`Scripts/test-waits` counts its sleep as machinery, not as a fixed sleep).
public enum Deadline {
    /// Runs `body` and returns its result, or nil when `limit` passes first (`body` is then
    /// cancelled and left behind).
    public static func race<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error>? {
        await withTaskGroup(of: Result<T, any Error>?.self) { group in
            group.addTask {
                do { return .success(try await body()) } catch { return .failure(error) }
            }
            group.addTask {
                try? await Task.sleep(for: limit)  // ends a hang; measures nothing
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// A timer that runs `expire` once `limit` has passed, unless the task it returns is
    /// cancelled first (the event came): for a waiter resumed from elsewhere.
    @discardableResult
    public static func after(_ limit: Duration, _ expire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            do { try await Task.sleep(for: limit) } catch { return }  // ends a hang; measures nothing
            expire()
        }
    }
}
