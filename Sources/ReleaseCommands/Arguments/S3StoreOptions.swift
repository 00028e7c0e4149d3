import ArchivePublishing
import ArgumentParser

/// `--endpoint`, `--region` and `--max-age`: how `push`, `rollout guard --push` and `repo
/// push` reach an S3-compatible store and how long its caches may keep what a push replaces.
struct S3StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("S3 endpoint URL of a non-AWS store.", valueName: "URL"))
    var endpoint: String?

    @Option(name: .long, help: ArgumentHelp("Signing region.", valueName: "REGION"))
    var region: String?

    @Option(
        name: .customLong("max-age"),
        help: ArgumentHelp(
            "Cache lifetime of what a push replaces: manifest.json and index.json, or an apt repository's indexes.", valueName: "SECONDS"))
    var maxAge = 60

    func validate() throws {
        guard (0...86400).contains(maxAge) else { throw ValidationError("--max-age must be 0 to 86400 seconds") }
    }

    /// A push of a release folder to `destination` (`s3://BUCKET/PREFIX`).
    /// - Throws: `ArchivePublishingError` for a URL or settings it cannot use.
    func push(to destination: String) throws -> ReleasePush {
        var push = ReleasePush(location: try S3Location.resolve(destination, endpoint: endpoint, region: region))
        push.pointerMaxAge = maxAge
        return push
    }
}
