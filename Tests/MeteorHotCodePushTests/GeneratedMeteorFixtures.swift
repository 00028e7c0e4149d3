import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport

/// The fixtures under `Fixtures/meteor/`, all written by ``MeteorAppGenerator``:
///
/// - `embedded/` – the embedded bundle, version `gen1`;
/// - `downloadable_versions/gen2`, `gen3` – normal updates (2 assets change each time);
/// - `traversal` – gen2 with an extra asset whose url is `/../../escape.txt`;
/// - `gen2_wrong_bytes` – gen2 whose `/app/app.js` bytes differ from the manifest hash;
/// - `gen2_then_gen3` – the manifest of gen2 with index.html and files of gen3 (the
///   server moved on between the manifest and the asset downloads);
/// - `gen2_then_gen3_modern` – the same, with an index.html that (like current Meteor
///   servers) carries no `autoupdateVersionCordova`;
/// - `capacitor/` – a seed built by `@meteorjs/capacitor` and the Meteor 3 server states it
///   meets (``MeteorCapacitorFixtures``; its README.md says where each rule comes from).
enum GeneratedMeteorFixtures {
    static let spec = MeteorAppGenerator.Spec()
    static var root: String { MeteorFixtures.generated }
    static var embedded: String { root + "/embedded" }
    static var versions: String { root + "/downloadable_versions" }

    /// Writes every fixture into `dir` (tests compare it with the committed copy).
    static func write(to dir: String) throws {
        let g = MeteorAppGenerator.self
        try g.writeEmbedded(spec, version: "gen1", to: dir + "/embedded")
        let versions = dir + "/downloadable_versions"
        try g.writeDownloadable(spec, generation: 2, version: "gen2", to: versions + "/gen2")
        try g.writeDownloadable(spec, generation: 3, version: "gen3", to: versions + "/gen3")

        try g.writeDownloadable(spec, generation: 2, version: "traversal", to: versions + "/traversal")
        let manifest = String(decoding: g.manifest(spec, generation: 2, version: "traversal"), as: UTF8.self)
        let escape =
            #"{"path":"escape.txt","where":"client","type":"asset","cacheable":false,"url":"/../../escape.txt","size":7,"hash":"\#(Digest.hex(.sha1, of: Data("escape\n".utf8)))"},"#
        try Data(manifest.replacingOccurrences(of: "\"manifest\":[\n  ", with: "\"manifest\":[\n  " + escape + "\n  ").utf8)
            .write(to: URL(fileURLWithPath: versions + "/traversal/manifest.json"))

        try g.writeDownloadable(spec, generation: 2, version: "gen2", to: versions + "/gen2_wrong_bytes")
        try Data("console.log('not the bytes the manifest names');\n".utf8)
            .write(to: URL(fileURLWithPath: versions + "/gen2_wrong_bytes/app/app.js"))

        try g.writeDownloadable(spec, generation: 3, version: "gen3", to: versions + "/gen2_then_gen3")
        try g.manifest(spec, generation: 2, version: "gen2").write(to: URL(fileURLWithPath: versions + "/gen2_then_gen3/manifest.json"))
        try g.writeDownloadable(
            spec, generation: 3, version: "gen3", to: versions + "/gen2_then_gen3_modern",
            index: g.indexHTML(spec, version: nil))
        try g.manifest(spec, generation: 2, version: "gen2").write(to: URL(fileURLWithPath: versions + "/gen2_then_gen3_modern/manifest.json"))
        try MeteorCapacitorFixtures.write(to: dir + "/capacitor")
    }
}
