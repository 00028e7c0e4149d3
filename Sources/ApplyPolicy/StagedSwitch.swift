import Foundation

/// A staged version and what deciding its switch needs (docs/apply-policies.md): read by
/// a host's apply driver from `state.json` and the version's signed policy.
package struct StagedSwitch: Sendable, Equatable {
    /// The pending version.
    package var version: String
    /// When it was staged; nil for a root that staged it before apply policies.
    package var since: Date?
    /// Its signed policy; ``ApplyPolicy/nextStart`` when it carries none.
    package var policy: ApplyPolicy
    /// A trial (of this or another version) is running: no switch until it ends.
    package var trialRunning: Bool

    package init(version: String, since: Date?, policy: ApplyPolicy, trialRunning: Bool) {
        self.version = version
        self.since = since
        self.policy = policy
        self.trialRunning = trialRunning
    }
}
