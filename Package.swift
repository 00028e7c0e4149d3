// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "clientctl",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "clientctl", targets: ["clientctl"]),
        .executable(name: "clientctl-shell", targets: ["clientctl-shell"]),
        .executable(name: "clientctl-device", targets: ["clientctl-device"]),
        .library(name: "ClientEngine", targets: ["ClientEngine"]),
        .library(name: "ClientShim", targets: ["ClientShim"]),
        .library(name: "ClientFoundation", targets: ["ClientFoundation"]),
        .library(name: "DeviceSetup", targets: ["DeviceSetup"]),
        .library(name: "ClientUpdater", targets: ["ClientUpdater"]),
        .library(name: "ClientUpdaterHTTP", targets: ["ClientUpdaterHTTP"]),
        .library(name: "StrictJSON", targets: ["StrictJSON"]),
        .library(name: "SignedManifest", targets: ["SignedManifest"]),
        .library(name: "SafeArchive", targets: ["SafeArchive"]),
        .library(name: "ArchivePublishing", targets: ["ArchivePublishing"]),
        .library(name: "MeteorHotCodePush", targets: ["MeteorHotCodePush"]),
        .library(name: "ServingCore", targets: ["ServingCore"]),
        .library(name: "ClientServer", targets: ["ClientServer"]),
        .library(name: "DeltaPatch", targets: ["DeltaPatch"]),
        .library(name: "AuthenticatedTime", targets: ["AuthenticatedTime"]),
        .library(name: "AuthenticatedTimeClient", targets: ["AuthenticatedTimeClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        // The collector's PostgreSQL store (Sources/FleetCollector/Store/PostgresReportStore.swift).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // `swift package generate-documentation` (Scripts/docs); no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        // WebKitGTK 4.1 (GTK 3): linked by clientctl-shell alone.
        .systemLibrary(
            name: "CWebKitGTK",
            pkgConfig: "webkit2gtk-4.1",
            providers: [.apt(["libwebkit2gtk-4.1-dev"])]
        ),
        // The page side: the WebAppLocalServer shim and the /__clientctl/ control protocol (no HTTP server in it).
        .target(name: "ClientShim", dependencies: ["ClientFoundation"]),
        // The foundation both sides build on: versions, digests, atomic files, the error
        // protocol and its one shape, platform calls, the one executor of blocking work
        // (BlockingExecutor, on NIOPosix). Depends on no other clientctl module.
        .target(name: "ClientFoundation", dependencies: ["COpenSSL", .product(name: "NIOPosix", package: "swift-nio")]),
        // A device's setup, read and written by both sides: config.json, the device template,
        // the settings init, a template and package share, the root-setup check, the report URL rule.
        .target(
            name: "DeviceSetup",
            dependencies: ["ApplyPolicy", "AuthenticatedTime", "ClientFoundation", "DeviceIdentity", "DeviceTargeting", "SignedManifest"]),
        // When a staged version takes over (issue 45): apply modes and policies, maintenance
        // windows read on the wall clock of their own zone, and the one decision of their precedence.
        .target(name: "ApplyPolicy", dependencies: ["ClientFoundation", "StrictJSON"]),
        // Channel-agnostic core: versions, store, state, selection, watchdog, retention, seams.
        .target(
            name: "ClientUpdater",
            dependencies: [
                "ApplyPolicy", "AuthenticatedTime", "ClientFoundation", "ClientShim", "COpenSSL", "CZstd", "DeviceIdentity", "DeviceSetup",
                "DeviceTargeting", "FleetReports", "StrictJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The production transport: http:/https: on AsyncHTTPClient (proxies, TLS, pooling).
        .target(
            name: "ClientUpdaterHTTP",
            dependencies: [
                "ClientFoundation", "DeviceSetup", "ClientUpdater",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The strict JSON reader for untrusted documents, RFC 8785 canonical JSON, pretty
        // printing and RFC 3339 timestamps; throws its own StrictJSONError.
        .target(name: "StrictJSON", dependencies: ["ClientFoundation"]),
        // The fleet report model both sides share: a report, a batch and its strict reader,
        // the fleet summary a collector answers. No device or release logic.
        .target(name: "FleetReports", dependencies: ["ClientFoundation", "DeviceIdentity", "DeviceTargeting", "StrictJSON"]),
        // The fleet seen: a FleetSummary as `fleet status`'s text and as the self-contained
        // page (inline SVG charts, no script). Pure rendering, no I/O.
        .target(name: "FleetPage", dependencies: ["ClientFoundation", "FleetReports"]),
        // Who a release is for (issue 55): device labels and their grammar, the target
        // expression language over labels and device ids. Pure values, no I/O.
        .target(name: "DeviceTargeting", dependencies: ["ClientFoundation", "DeviceIdentity"]),
        // Who a device is (issue 55): its id, its public key and its labels, one type each
        // and one hex rule, for the device, the collector and the commands alike. No I/O.
        .target(name: "DeviceIdentity", dependencies: ["ClientFoundation"]),
        // Signed manifests: Ed25519 through OpenSSL, the manifest, index, trust-root and rollout rules.
        .target(
            name: "SignedManifest",
            dependencies: [
                "ApplyPolicy", "ClientFoundation", "DeviceIdentity", "DeviceTargeting", "StrictJSON", "COpenSSL",
            ]
        ),
        // Authenticated time (Roughtime, RFC 10049): requests, strict parsing and verification of
        // answers (Ed25519 of SignedManifest, SHA-512 of OpenSSL), the quorum's decision, the
        // value a device persists. Pure steps on bytes: no socket (the release side links it).
        .target(name: "AuthenticatedTime", dependencies: ["ClientFoundation", "SignedManifest", "COpenSSL"]),
        // The device's client of authenticated time: one bounded UDP query of a Roughtime server
        // (NIO) and the quorum of several. Device layer: no release module reaches it (Scripts/layers).
        .target(
            name: "AuthenticatedTimeClient",
            dependencies: [
                "AuthenticatedTime", "ClientFoundation",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Every use of libarchive: the archive formats, safe extraction (entry rules, caps) and
        // reproducible archive writing.
        .target(
            name: "SafeArchive",
            dependencies: ["ClientFoundation", "CArchive"]
        ),
        // Delta updates: zstd patches against a referenced base (long window, caps checked
        // from the frame header before anything is allocated).
        .target(
            name: "DeltaPatch",
            dependencies: ["ClientFoundation", "CZstd"]
        ),
        // Channel 1 on the device: the signed-archive channel (fetch, verify, unpack or patch, store).
        .target(
            name: "SignedArchive",
            dependencies: [
                "ApplyPolicy", "ClientFoundation", "DeviceIdentity", "DeviceSetup", "DeviceTargeting", "ClientUpdater", "StrictJSON",
                "SignedManifest", "SafeArchive", "DeltaPatch", "FleetReports",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `clientctl mirror`: a verified copy of a channel in a folder any static server serves
        // (roots, manifests, archives rebuilt from patches); the device's verification, no trust.
        .target(
            name: "SiteMirror",
            dependencies: ["ClientFoundation", "ClientUpdater", "DeltaPatch", "SafeArchive", "SignedManifest", "StrictJSON"]
        ),
        // Channel 1 for release engineers: build folder → archive, signed manifest, release folder;
        // push to S3-compatible storage.
        .target(
            name: "ArchivePublishing",
            dependencies: [
                "ApplyPolicy", "ReleaseSigning", "ClientFoundation", "DeviceTargeting", "StrictJSON", "SignedManifest", "SafeArchive",
                "DeltaPatch", "COpenSSL",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Channel 2: Meteor hot code push (StrictJSON for its strict JSON reader).
        .target(
            name: "MeteorHotCodePush",
            dependencies: [
                "ClientFoundation", "DeviceSetup", "ClientUpdater", "StrictJSON", "FleetReports", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The serving rules of a client, whatever the front end (`serve`'s HTTP server, the
        // shell's app: scheme and loopback origin): versions, files, ranges, caching. No HTTP server.
        .target(
            name: "ServingCore",
            dependencies: [
                "ClientFoundation", "ClientUpdater", .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The loopback HTTP listener rules `serve` and the shell's loopback origin share (the
        // Host check, GET and HEAD only, the file route, timeouts, the one Application builder).
        .target(
            name: "LoopbackHTTP",
            dependencies: [
                "ClientShim", "ServingCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The loopback HTTP server behind `clientctl serve` (Hummingbird over the serving core).
        .target(
            name: "ClientServer",
            dependencies: [
                "ClientFoundation", "ClientShim", "ClientUpdater", "LoopbackHTTP", "ServingCore", "StrictJSON",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The native shell's loopback http origin: the serving core over the listener rules
        // it shares with `serve` (LoopbackHTTP), behind the run's launch secret.
        .target(
            name: "ShellLoopback",
            dependencies: [
                "ClientFoundation", "LoopbackHTTP", "ServingCore", "ClientShim",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The fleet report collector behind `clientctl collect`: HTTP ingest (Hummingbird), the
        // report store (SQLite through GRDB), rate limits, Prometheus metrics, the fleet summary.
        .target(
            name: "FleetCollector",
            dependencies: [
                "ClientFoundation", "DeviceIdentity", "FleetReports", "StrictJSON", "CZstd", "SignedManifest",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Release side: a client build → a Debian package of a self-updating native app (its
        // template checked with init's rules from SignedArchive; no engine).
        .target(
            name: "AppPackaging",
            dependencies: ["ClientFoundation", "DeviceSetup", "SafeArchive"]
        ),
        // The one entry point of every host: opens a root, choosing its channel from the config.
        .target(
            name: "ClientEngine",
            dependencies: [
                "ApplyPolicy", "AuthenticatedTime", "AuthenticatedTimeClient", "ClientFoundation", "ClientShim", "DeviceIdentity", "DeviceSetup",
                "ClientUpdater", "ClientUpdaterHTTP", "SignedArchive", "SignedManifest", "MeteorHotCodePush", "FleetReports",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The shell's pure rules, free of GTK and WebKit (the rollback watch, the first-version
        // latch, the line throttle): tested on their own, on injected clocks.
        .target(name: "ShellRules", dependencies: ["ClientFoundation"]),
        // The native Linux shell: one GTK window, one WebKitGTK view, the client served through
        // the app: URI scheme by the serving core, the page bridged to the engine in-process.
        // The shell's code is a library (Sources/ClientctlShellApp), so one program can hold it
        // beside the command line's (clientctl-device); each executable is a one-line main.
        .target(
            name: "ClientctlShellApp",
            dependencies: [
                "DeviceSetup", "ClientFoundation", "ClientEngine", "ClientUpdater", "ClientShim", "ServingCore", "ShellLoopback", "ShellRules",
                "CWebKitGTK",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "clientctl-shell", dependencies: ["ClientctlShellApp"]),
        // The command line, by side (docs/guides/development.md): what both sides share
        // (error reporting, exit codes, `--json`, the root's texts) ...
        .target(
            name: "CommandSupport",
            dependencies: [
                "ClientFoundation", "DeviceIdentity", "DeviceSetup", "DeviceTargeting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // ... the device's commands (init, install, serve, the watchdog's): all a device runs ...
        .target(
            name: "DeviceCommands",
            dependencies: [
                "DeviceIdentity", "DeviceSetup", "DeviceTargeting", "CommandSupport", "ClientFoundation", "ClientEngine", "ClientUpdater",
                "ClientUpdaterHTTP", "ServingCore", "SignedManifest",
                "SignedArchive", "SiteMirror",
                "MeteorHotCodePush", "ClientServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Release-side signing: keys and their files, signers (a key, a command: an HSM or
        // KMS), and the drafts of manifests, trust roots and restrictions they sign.
        .target(
            name: "ReleaseSigning",
            dependencies: ["ApplyPolicy", "ClientFoundation", "DeviceTargeting", "StrictJSON", "SignedManifest", "COpenSSL"]),
        // The rollout guard as a library: the rule, one pass and its outcome, the fleet and
        // the clock injected (`clientctl rollout guard` is its adapter).
        .target(
            name: "RolloutGuard",
            dependencies: [
                "ApplyPolicy", "DeviceTargeting", "ReleaseSigning", "ClientFoundation", "FleetReports", "SignedManifest", "StrictJSON",
                "ArchivePublishing",
            ]
        ),
        // The audit trail (issue 76): every act on a fleet as a hash-chained line signed with
        // the actor's key (the rollout key, or --audit-key), its verification and its reading.
        .target(
            name: "AuditTrail",
            dependencies: ["ClientFoundation", "StrictJSON", "SignedManifest", "ReleaseSigning"]
        ),
        // Who may use the console (issue 76): the operators file and its memory-hard password
        // hashes (scrypt, OpenSSL's), sessions, CSRF tokens, login throttles. No HTTP.
        .target(
            name: "ConsoleAccess",
            dependencies: ["ClientFoundation", "StrictJSON", "COpenSSL"]
        ),
        // `clientctl console` (issue 76): the operator's web console (Hummingbird) over the
        // fleet's figures, its acts (halt, lift, cap, admit, reject) and the audit trail.
        .target(
            name: "OperatorConsole",
            dependencies: [
                "AuditTrail", "ConsoleAccess", "ClientFoundation", "StrictJSON", "SignedManifest", "ReleaseSigning", "ArchivePublishing",
                "DeviceIdentity", "FleetReports", "FleetPage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // ... and the release engineer's (keys, publishing, rollouts, packaging, the fleet).
        .target(
            name: "ReleaseCommands",
            dependencies: [
                "ApplyPolicy", "DeviceIdentity", "DeviceSetup", "DeviceTargeting", "ReleaseSigning", "CommandSupport", "ClientFoundation",
                "ClientUpdater",
                "ClientUpdaterHTTP", "StrictJSON", "SignedManifest", "SafeArchive",
                "ArchivePublishing", "FleetReports", "FleetPage", "AppPackaging", "FleetCollector", "RolloutGuard",
                "AuditTrail", "ConsoleAccess", "OperatorConsole",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The full `clientctl` of a build machine (Sources/clientctl): both sides' commands.
        .target(
            name: "ClientctlCommands",
            dependencies: [
                "CommandSupport", "DeviceCommands", "ReleaseCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "clientctl", dependencies: ["ClientctlCommands"]),
        // What a packaged app ships (Scripts/build-release, `clientctl package`): one program
        // that is `clientctl-shell` when called by that name and the device's `clientctl`
        // otherwise, so the Swift runtime, Foundation and its ICU data are in the .deb once,
        // not twice. It links the device side only (DeviceLinkageTests holds it to that).
        .executableTarget(
            name: "clientctl-device", dependencies: ["DeviceCommands", "ClientctlShellApp"]),
        // Examples/MinimalHost: a host on public API only (Scripts/docs checks that it
        // type-checks outside the package and runs it on a fresh root; not shipped).
        .executableTarget(
            name: "minimal-host",
            dependencies: [
                "ClientFoundation", "ClientEngine", "ClientUpdater", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/MinimalHost"
        ),
        // Driver of Scripts/bench/serve: organizer timing and a bare server for load tests (not shipped).
        .executableTarget(
            name: "serve-bench",
            dependencies: ["ServingCore", "ClientUpdater", "ClientServer"],
            path: "Benchmarks/serve-bench"
        ),
        // Client of Scripts/bench/transport (not shipped).
        .executableTarget(
            name: "transport-bench",
            dependencies: ["ClientFoundation", "ClientUpdater", "ClientUpdaterHTTP"],
            path: "Benchmarks/transport-bench"
        ),
        // Scripts/bench/fleet: 1,000 library Updaters on a simulated clock (not shipped).
        .executableTarget(
            name: "fleet-bench",
            dependencies: [
                "ClientFoundation", "DeviceSetup", "ClientEngine", "ClientUpdater", "ClientUpdaterHTTP", "StrictJSON", "SignedManifest",
                "SignedArchive",
                "ArchivePublishing", "FleetReports",
            ],
            path: "Benchmarks/fleet-bench"
        ),
        // Scripts/simulate: the device's world in a deterministic simulator (not shipped).
        .executableTarget(
            name: "device-sim",
            dependencies: [
                "ClientFoundation", "DeviceIdentity", "DeviceSetup", "DeviceTargeting", "ClientUpdater", "SignedArchive", "SignedManifest",
                "ArchivePublishing", "ReleaseSigning", "ClientEngine", "FleetReports", "ApplyPolicy", "AuthenticatedTime", "ClientShim",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/device-sim"
        ),
        // Scripts/bench/targeting: which release each of 10,000 simulated devices takes (not shipped).
        .executableTarget(
            name: "targeting-bench",
            dependencies: [
                "ClientFoundation", "ClientUpdater", "DeviceIdentity", "DeviceTargeting", "ReleaseSigning", "SignedArchive", "SignedManifest",
            ],
            path: "Benchmarks/targeting-bench"),
        // Scripts/bench/apply: a fleet's apply decisions on a simulated clock (not shipped).
        .executableTarget(name: "apply-bench", dependencies: ["ApplyPolicy"], path: "Benchmarks/apply-bench"),
        // Scripts/bench/roughtime: authenticated time's cost on loopback against real servers (not shipped).
        .executableTarget(
            name: "roughtime-bench", dependencies: ["AuthenticatedTime", "AuthenticatedTimeClient"], path: "Benchmarks/roughtime-bench"),
        // Scripts/bench/collector: batches POSTed to a real `clientctl collect` (not shipped).
        .executableTarget(
            name: "collector-bench",
            dependencies: [
                "FleetCollector", "FleetReports", "CZstd", "SignedManifest", .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Benchmarks/collector-bench"
        ),
        .target(
            name: "TestSupport",
            dependencies: [
                "DeviceSetup", "ReleaseSigning", "ClientShim", "ClientUpdater", "ClientUpdaterHTTP", "StrictJSON", "SignedManifest", "SafeArchive",
                "SignedArchive",
                "ArchivePublishing", "AuthenticatedTime", "COpenSSL", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/TestSupport"
        ),
        // One test target per module, named after it (its unit and library-level tests);
        // clientctlTests and ClientctlShellTests drive the two binaries.
        .testTarget(name: "ClientFoundationTests", dependencies: ["ClientFoundation", "TestSupport"]),
        .testTarget(name: "ClientShimTests", dependencies: ["ClientShim", "TestSupport"]),
        .testTarget(
            name: "ClientUpdaterTests",
            dependencies: [
                "AuthenticatedTime", "ClientFoundation", "DeviceIdentity", "DeviceSetup", "DeviceTargeting", "ClientUpdater",
                "ClientUpdaterHTTP", "FleetReports", "TestSupport",
            ]),
        .testTarget(name: "ClientUpdaterHTTPTests", dependencies: ["ClientUpdaterHTTP", "ClientUpdater", "TestSupport"]),
        .testTarget(name: "StrictJSONTests", dependencies: ["StrictJSON"]),
        .testTarget(name: "FleetReportsTests", dependencies: ["DeviceTargeting", "FleetReports", "StrictJSON"]),
        .testTarget(
            name: "RolloutGuardTests",
            dependencies: [
                "DeviceIdentity", "ApplyPolicy", "RolloutGuard", "DeviceTargeting", "FleetReports", "ClientFoundation", "SignedManifest",
                "ArchivePublishing",
                "TestSupport",
            ]),
        .testTarget(
            name: "FleetCollectorTests",
            dependencies: [
                "ClientFoundation", "DeviceIdentity", "DeviceTargeting", "FleetCollector", "FleetReports", "CZstd", "SignedManifest",
                "TestSupport",
            ]),
        .testTarget(name: "DeviceTargetingTests", dependencies: ["DeviceIdentity", "DeviceTargeting", "ClientFoundation"]),
        .testTarget(name: "DeviceIdentityTests", dependencies: ["DeviceIdentity", "ClientFoundation"]),
        .testTarget(name: "FleetPageTests", dependencies: ["FleetPage", "FleetReports", "TestSupport"]),
        .testTarget(
            name: "SignedManifestTests",
            dependencies: [
                "ApplyPolicy", "DeviceTargeting", "ReleaseSigning", "SignedManifest", "SafeArchive", "StrictJSON", "ClientUpdater", "TestSupport",
            ]),
        .testTarget(name: "SafeArchiveTests", dependencies: ["SafeArchive", "ClientFoundation", "SignedManifest", "ClientUpdater", "TestSupport"]),
        .testTarget(name: "DeltaPatchTests", dependencies: ["DeltaPatch", "ClientUpdater", "TestSupport"]),
        .testTarget(
            name: "SignedArchiveTests",
            dependencies: [
                "ClientFoundation", "DeviceIdentity", "DeviceTargeting", "ReleaseSigning", "SignedArchive", "SignedManifest", "StrictJSON",
                "ClientUpdater", "ClientUpdaterHTTP", "TestSupport",
            ]),
        .testTarget(
            name: "ArchivePublishingTests",
            dependencies: [
                "ReleaseSigning", "ArchivePublishing", "SignedManifest", "StrictJSON", "SafeArchive", "DeltaPatch", "ClientUpdater", "TestSupport",
            ]),
        .testTarget(
            name: "MeteorHotCodePushTests",
            dependencies: [
                "ClientFoundation", "DeviceSetup", "MeteorHotCodePush", "SignedManifest", "ClientUpdater", "ClientUpdaterHTTP", "TestSupport",
            ]),
        .testTarget(
            name: "ClientServerTests",
            dependencies: [
                "DeviceSetup", "ClientServer", "ServingCore", "ShellLoopback", "ClientShim",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                "ClientUpdater", "SignedManifest", "SignedArchive", "ArchivePublishing", "MeteorHotCodePush", "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .testTarget(
            name: "ClientEngineTests",
            dependencies: [
                "ApplyPolicy", "ClientFoundation", "DeviceIdentity", "DeviceSetup", "FleetReports", "ReleaseSigning", "ClientEngine", "ClientUpdater",
                "ClientUpdaterHTTP", "SignedManifest", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "clientctlTests",
            dependencies: [
                "ApplyPolicy", "AuthenticatedTime", "ClientFoundation", "DeviceSetup", "DeviceTargeting", "ReleaseSigning", "ClientUpdater",
                "ClientUpdaterHTTP", "StrictJSON", "SignedManifest", "SafeArchive", "SignedArchive", "ArchivePublishing", "TestSupport",
            ]),
        .testTarget(name: "ClientctlShellTests", dependencies: ["TestSupport"]),
        .testTarget(name: "ShellRulesTests", dependencies: ["ShellRules", "ClientFoundation", "TestSupport"]),
        .testTarget(name: "ServingCoreTests", dependencies: ["ServingCore", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "ApplyPolicyTests", dependencies: ["ApplyPolicy"]),
        .testTarget(
            name: "ShellLoopbackTests",
            dependencies: [
                "ShellLoopback", "ServingCore", "ClientShim", "ClientUpdater", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        // AuthenticatedTime's tests and its client's (one fake signer, the real servers of Scripts/roughtime-server).
        .testTarget(
            name: "AuthenticatedTimeTests",
            dependencies: [
                "AuthenticatedTime", "AuthenticatedTimeClient", "SignedManifest", "ClientFoundation", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .testTarget(name: "AppPackagingTests", dependencies: ["AppPackaging", "ClientFoundation", "TestSupport"]),
        .testTarget(name: "AuditTrailTests", dependencies: ["AuditTrail", "ClientFoundation", "ReleaseSigning", "SignedManifest", "TestSupport"]),
        .testTarget(name: "ConsoleAccessTests", dependencies: ["ConsoleAccess", "ClientFoundation", "TestSupport"]),
        .testTarget(
            name: "OperatorConsoleTests",
            dependencies: [
                "OperatorConsole", "AuditTrail", "ConsoleAccess", "ArchivePublishing", "ClientFoundation", "ClientUpdater", "FleetReports",
                "FleetPage", "ReleaseSigning", "SignedArchive", "SignedManifest", "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// Fuzz targets (Fuzz/, not shipped): declared only for Scripts/fuzz, which builds them with
// `-sanitize=fuzzer,address` into its own scratch folder, so `swift build` never links them.
if Context.environment["CLIENTCTL_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "clientctl-fuzz",
            dependencies: [
                "ClientShim", "ClientUpdater", "StrictJSON", "SignedManifest", "SafeArchive", "SignedArchive", "MeteorHotCodePush", "ServingCore",
                "DeltaPatch", "FleetReports",
            ],
            path: "Fuzz/Targets"
        )
    )
}
