import Foundation

/// What libfaketime's `faketime` wrapper leaves in /dev/shm when it is killed: a semaphore
/// and a shared-memory segment named after its PID (`sem.faketime_sem_PID`,
/// `faketime_shm_PID`). A later wrapper that gets the same PID (PIDs come round again
/// quickly: `pid_max` may be 32,768) refuses to start ("sem_open: File exists"), so a test
/// that kills a wrapper removes them once it has ended.
public enum FaketimeLeftovers {
    /// Removes the leftovers of the wrapper that ran as `pid` (ended).
    public static func remove(pid: Int32) {
        for name in ["sem.faketime_sem_\(pid)", "faketime_shm_\(pid)"] {
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + name)
        }
    }
}
