import ArgumentParser
import ReleaseSigning
import SignedManifest

/// `clientctl root …`: build and countersign a channel's trust roots offline.
struct RootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "root",
        abstract: "Build, countersign and check a channel's signed trust roots (root/N.json).",
        discussion: """
            A root names the keys and, for the `root` and `release` roles (and the optional
            `rollout` role, which signs only restrictions), which keys may
            sign and how many must. Publish it as OUT/CHANNEL/root/N.json; devices walk
            N → N+1 at each check. Root N+1 must be signed by a threshold of root N's root
            keys and of its own. Every edit drops the signatures (they covered other
            bytes): edit first, then sign. A root may also name other channels of the
            app its devices may choose to follow (--choosable, set-choosable).

            The examples write root 1, then root 2, which replaces release key r1 by r3.

            Examples:
              clientctl root init root-1.json --app com.example.notes \\
                --channel stable --root-key a.pub.pem --root-key b.pub.pem \\
                --root-threshold 2 --release-key r1.pub.pem \\
                --release-key r2.pub.pem --release-threshold 2 --expires 365d
              clientctl root sign root-1.json --key a.pem --key b.pem
              clientctl root init root-2.json \\
                --from releases/stable/root/1.json --expires 365d
              clientctl root add-key root-2.json --role release --key r3.pub.pem
              clientctl root remove-key root-2.json --role release --key r1.pub.pem
              clientctl root sign root-2.json --key a.pem --key b.pem
              clientctl root verify releases/stable
            """,
        subcommands: [
            RootInitCommand.self, RootAddKeyCommand.self, RootRemoveKeyCommand.self, RootSetThresholdCommand.self,
            RootSetChoosableCommand.self, RootSignCommand.self, RootVerifyCommand.self,
        ]
    )
}

extension RootDraft.Role: ExpressibleByArgument {}
