import AppPackaging
import ArgumentParser
import ClientFoundation
import Foundation
import StrictJSON

/// `clientctl repo …`: a signed apt repository of packaged apps, one suite per channel.
struct RepoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repo",
        abstract: "Maintain a signed apt repository of packaged apps (reprepro).",
        discussion: """
            A folder of apt's layout (dists/, pool/, and reprepro's conf/ and db/) holding \
            the .debs `clientctl package` makes, one suite per channel (stable, beta). \
            Every change is made on a copy, every suite's Release gets by-hash indexes, \
            Acquire-By-Hash and a Valid-Until (--valid-for days ahead), is signed into \
            InRelease and Release.gpg with --gpg-key in a GNUPGHOME of its own (never your \
            keyring), and the copy replaces the folder in one rename: a failure leaves the \
            repository as it was. Serve dists/ and pool/; a device's package names the \
            source (package --apt-repo), or upload them with repo push.

            Examples:
              clientctl repo add dist/notes_2.1.0_amd64.deb --repo apt --suite stable \\
                  --gpg-key keys/archive.asc
              clientctl repo remove notes --repo apt --suite beta --gpg-key keys/archive.asc
              clientctl repo list --repo apt --json
              clientctl repo sign --repo apt --gpg-key keys/archive.asc
              clientctl repo push --repo apt s3://downloads/apt
            """,
        subcommands: [
            RepoAddCommand.self, RepoRemoveCommand.self, RepoListCommand.self, RepoSignCommand.self, RepoPhaseCommand.self, RepoPushCommand.self,
        ]
    )
}

/// The options every changing `repo` subcommand takes.
struct RepoOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The repository folder (made when missing or empty).", valueName: "DIR"))
    var repo: String
    @Option(help: ArgumentHelp("The suite: the channel's name, e.g. stable or beta.", valueName: "NAME"))
    var suite: String
    @Option(
        name: .customLong("gpg-key"),
        help: ArgumentHelp("The signing key: an OpenPGP secret key without a passphrase (armored).", valueName: "FILE"))
    var gpgKey: String
}
