// serve-bench: the Swift half of Scripts/bench/serve.
//
//   serve-bench organize TREE ROOT ID    organize every file of TREE as version ID under
//                                        ROOT/serving; prints one JSON line of timings
//   serve-bench serve SERVING_DIR PORT   serve an organized folder on 127.0.0.1:PORT until
//                                        SIGTERM/SIGINT
import ClientServer
import ClientUpdater
import Foundation
import Logging
import ServingCore

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("serve-bench: \(message)\n".utf8))
    exit(64)
}

func assets(of tree: String) -> [ServedAsset] {
    guard let walker = FileManager.default.enumerator(atPath: tree) else { fail("cannot list \(tree)") }
    var result: [ServedAsset] = []
    while let relative = walker.nextObject() as? String {
        var st = stat()
        guard lstat(tree + "/" + relative, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
        result.append(ServedAsset(urlPath: "/" + relative, sourceFile: tree + "/" + relative, cacheable: true))
    }
    return result
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "organize":
    guard arguments.count == 5 else { fail("usage: serve-bench organize TREE ROOT ID") }
    let start = DispatchTime.now().uptimeNanoseconds
    let list = assets(of: arguments[2])
    let listed = DispatchTime.now().uptimeNanoseconds
    do {
        let report = try Organizer(layout: RootLayout(root: arguments[3])).organize(id: arguments[4], assets: list)
        let end = DispatchTime.now().uptimeNanoseconds
        print(
            "{\"files\":\(list.count),\"listSeconds\":\(Double(listed - start) / 1e9),\"organizeSeconds\":\(Double(end - listed) / 1e9),"
                + "\"linkedFiles\":\(report.linkedFiles),\"linkedBytes\":\(report.linkedBytes),"
                + "\"copiedFiles\":\(report.copiedFiles),\"copiedBytes\":\(report.copiedBytes)}")
    } catch {
        fail("\(error)")
    }
case "serve":
    guard arguments.count == 4, let port = Int(arguments[3]) else { fail("usage: serve-bench serve SERVING_DIR PORT") }
    var logger = Logger(label: "serve-bench")
    logger.logLevel = .warning
    do {
        let server = try ClientServer(configuration: ServerConfiguration(port: port), logger: logger)
        try server.activate(servingDirectory: arguments[2])
        try await server.runService()
    } catch {
        fail("\(error)")
    }
default:
    fail("usage: serve-bench organize TREE ROOT ID | serve SERVING_DIR PORT")
}
