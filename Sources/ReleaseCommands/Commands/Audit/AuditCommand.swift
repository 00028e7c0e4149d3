import ArgumentParser

/// `clientctl audit …`: reading and checking the audit trail of acts on the fleet.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Check or print the audit trail of acts on releases and devices.",
        discussion: """
            The audit trail is a file of signed, hash-chained entries: one per act on the \
            fleet (halt, lift, cap, admit, reject, publish, rollout …) and per refused \
            attempt. The console appends to it, and so do publish, rollout, cohort set, \
            fleet admit and fleet reject when given --audit FILE (docs/audit-trail.md).

            Examples:
              clientctl audit verify audit.jsonl --trust keys/rollout.pub.pem
              clientctl audit show audit.jsonl
              clientctl audit show audit.jsonl --json
            """,
        subcommands: [AuditVerifyCommand.self, AuditShowCommand.self]
    )
}
