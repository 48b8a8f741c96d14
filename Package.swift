// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode, internal imports by default, warnings as errors.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .unsafeFlags(["-warnings-as-errors"]),
]

let package = Package(
    name: "Flowmeter",
    // iOS 15 for the FlowmeterModels and FlowmeterReporter products apps embed; the server targets are built for
    // Linux and macOS only.
    platforms: [.macOS(.v15), .iOS(.v15)],
    products: [
        .library(name: "FlowmeterModels", targets: ["FlowmeterModels"]),
        .library(name: "FlowmeterReporter", targets: ["FlowmeterReporter"]),
        .executable(name: "flowmeter", targets: ["flowmeter"]),
        .executable(name: "flowmeter-bench", targets: ["flowmeter-bench"]),
    ],
    targets: [
        // C libraries from Debian, one system-library target each, each imported by exactly one Swift target.
        .systemLibrary(name: "CRdKafka", pkgConfig: "rdkafka", providers: [.apt(["librdkafka-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // mimalloc replaces glibc's malloc in the executables only (ProcessAllocator); Debian ships no .pc for it.
        .systemLibrary(name: "CMimalloc", providers: [.apt(["libmimalloc-dev"])]),
        // libFuzzer's driver entry, declared only: the toolchain links libFuzzer into fuzz builds (docs/fuzzing.md).
        .systemLibrary(name: "CLibFuzzer"),

        // The shared models: the contract's types, lossy Codable decoding and the manifest builder; Foundation only,
        // no platform module: what an app compiles (scripts/portability-gate.py holds it to that).
        .target(name: "FlowmeterModels", swiftSettings: strictSettings),
        // The server's fast path over the contract: the one-pass batch decoder, the string interner, the Kafka record
        // writers, series keys, synthetic batches, the monotonic clock. Never part of an app.
        .target(name: "FlowmeterWire", dependencies: ["FlowmeterModels"], swiftSettings: strictSettings),

        // Wrappers around the C libraries.
        .target(
            name: "Kafka",
            dependencies: ["CRdKafka", "CDeflate", "FlowmeterModels", "FlowmeterWire", "Lifecycle", "Logging"],
            swiftSettings: strictSettings),
        .target(
            name: "HTTPServer", dependencies: ["CMicroHTTPD", "FlowmeterModels", "FlowmeterWire", "Lifecycle"],
            swiftSettings: strictSettings),
        .target(name: "Gzip", dependencies: ["CZlib", "CDeflate", "FlowmeterModels"], swiftSettings: strictSettings),
        .target(name: "Hashing", dependencies: ["CCrypto", "FlowmeterModels"], swiftSettings: strictSettings),

        // The program's structured logger (JSON or logfmt), used by every service.
        .target(name: "Logging", dependencies: ["FlowmeterModels", "FlowmeterWire"], swiftSettings: strictSettings),
        // Services and the group that starts them in order and stops them in reverse; blocking calls on threads.
        .target(name: "Lifecycle", dependencies: ["Logging"], swiftSettings: strictSettings),

        // Prometheus exposition: counters, gauges, histograms, bounded label sets.
        .target(name: "Metrics", swiftSettings: strictSettings),

        // Rollups: mergeable minute aggregates, HyperLogLog, the rollups-topic codec, deploy markers.
        .target(
            name: "Rollups", dependencies: ["FlowmeterModels", "FlowmeterWire", "Metrics"],
            swiftSettings: strictSettings),
        // The rollup store: one protocol, SQLite and PostgreSQL.
        .target(name: "RollupStore", dependencies: ["Rollups", "CSQLite", "CLibPQ"], swiftSettings: strictSettings),
        // Fills a store in bulk and times the detector's queries: for flowmeter-bench and its test, not shipped.
        .target(
            name: "RollupStoreBenchmarks", dependencies: ["RollupStore", "Rollups", "FlowmeterModels"],
            swiftSettings: strictSettings),
        // The ingest benchmark's /proc readings, medians, pairing and verdicts: for flowmeter-bench and its test.
        .target(name: "IngestBenchmarks", swiftSettings: strictSettings),
        // Spikes, ungated types, typos, new types, deploy attribution, alerts.
        .target(
            name: "Detector", dependencies: ["Rollups", "FlowmeterModels", "FlowmeterWire"],
            swiftSettings: strictSettings),
        // Weeks of seeded synthetic traffic with planted incidents, and the detector's score on them: for
        // flowmeter-bench detector and DetectorTests, not shipped.
        .target(
            name: "DetectorBenchmarks", dependencies: ["Detector", "Rollups", "FlowmeterModels", "FlowmeterWire"],
            swiftSettings: strictSettings),
        // Builds the store from flowmeter.batches.v1, exactly once (dedupe, rollups and offsets in one transaction).
        .target(
            name: "Sink",
            dependencies: [
                "Rollups", "RollupStore", "Kafka", "Lifecycle", "Hashing", "FlowmeterModels", "FlowmeterWire",
            ],
            swiftSettings: strictSettings),

        // The ingest service.
        .target(
            name: "Collector",
            dependencies: [
                "FlowmeterModels", "FlowmeterWire", "Kafka", "HTTPServer", "Gzip", "Hashing", "Metrics", "Rollups",
                "Logging", "Lifecycle",
            ],
            swiftSettings: strictSettings
        ),

        // The client SDK apps embed: disk queue, pre-aggregation, paced uploads (Foundation only, like the models).
        .target(name: "FlowmeterReporter", dependencies: ["FlowmeterModels"], swiftSettings: strictSettings),

        // Builds the running system of each long-running command (serve, sink, watch) as a ServiceGroup.
        .target(
            name: "FlowmeterRuntime",
            dependencies: [
                "Collector", "Sink", "RollupStore", "Detector", "Kafka", "Lifecycle", "Logging", "Rollups",
                "HTTPServer",
                "Metrics",
                "FlowmeterWire",
            ],
            swiftSettings: strictSettings
        ),

        // Command tree and output formats; the executable only calls into it.
        .target(
            name: "FlowmeterCLI",
            dependencies: [
                "FlowmeterModels", "Kafka", "Collector", "FlowmeterReporter", "Gzip", "Sink", "RollupStore", "Detector",
                "Rollups", "Lifecycle", "Logging", "FlowmeterRuntime", "Hashing", "FlowmeterWire", "HTTPServer",
            ],
            swiftSettings: strictSettings
        ),
        // The allocator the executables link in place of glibc's; tests and fuzz targets keep glibc's.
        .target(name: "ProcessAllocator", dependencies: ["CMimalloc"], swiftSettings: strictSettings),
        .executableTarget(
            name: "flowmeter", dependencies: ["FlowmeterCLI", "ProcessAllocator"], swiftSettings: strictSettings),
        // How an app's build writes its capability manifest (docs/manifests.md): `swift run flowmeter-manifest-example`.
        .executableTarget(
            name: "flowmeter-manifest-example", dependencies: ["FlowmeterModels"], path: "Examples/ManifestGenerator",
            swiftSettings: strictSettings),
        // How an app embeds the SDK (docs/reporter.md): the Flow-UI adapter, a SwiftUI app under #if canImport(UIKit) for
        // Apple toolchains, and a command-line entry point where SwiftUI is missing: `swift run flowmeter-app-example`.
        .executableTarget(
            name: "flowmeter-app-example", dependencies: ["FlowmeterReporter", "FlowmeterModels"],
            path: "Examples/FlowUIExample", swiftSettings: strictSettings),
        // RUNNING_ON_VALGRIND for `flowmeter-bench instructions`; always 0 without the Valgrind headers.
        .target(name: "CCallgrind"),
        .executableTarget(
            name: "flowmeter-bench",
            dependencies: [
                "FlowmeterModels", "FlowmeterReporter", "FlowmeterWire", "Kafka", "Gzip", "RollupStore",
                "RollupStoreBenchmarks", "IngestBenchmarks", "TestSupport", "CCallgrind", "Collector",
                "FlowmeterRuntime", "Logging", "ProcessAllocator", "Detector", "DetectorBenchmarks", "Sink",
            ],
            swiftSettings: strictSettings
        ),

        // Fuzz targets (docs/fuzzing.md): the invariant checks in one library, which the test suite also runs over the
        // corpus in Tests/Fuzz, and one thin executable per target that `make fuzz` builds with libFuzzer and ASan.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "CLibFuzzer", "FlowmeterModels", "FlowmeterWire", "Gzip", "Rollups", "RollupStore", "Collector",
                "HTTPServer", "Logging", "FlowmeterCLI", "Sink",
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(name: "FuzzBatchDecoder", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),
        .executableTarget(name: "FuzzInflate", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),
        .executableTarget(name: "FuzzDeployMarker", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),
        .executableTarget(name: "FuzzBlobCodec", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),
        .executableTarget(name: "FuzzIngestRequest", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),
        .executableTarget(name: "FuzzPageWalker", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),
        .executableTarget(name: "FuzzBatchRecord", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),

        // Shared test helpers: mock-cluster fixture, HTTP test client, temp directories.
        .target(
            name: "TestSupport",
            dependencies: ["FlowmeterModels", "FlowmeterWire", "Kafka", "HTTPServer"],
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "FlowmeterModelsTests",
            dependencies: ["FlowmeterModels", "FlowmeterWire", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "KafkaTests", dependencies: ["Kafka", "CRdKafka", "TestSupport", "FlowmeterWire"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "GzipTests", dependencies: ["Gzip", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "HashingTests", dependencies: ["Hashing"], swiftSettings: strictSettings),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"], swiftSettings: strictSettings),
        .testTarget(
            name: "LifecycleTests", dependencies: ["Lifecycle", "Logging"], swiftSettings: strictSettings),
        .testTarget(
            name: "FlowmeterReporterTests",
            dependencies: [
                "FlowmeterReporter", "FlowmeterModels", "FlowmeterWire", "HTTPServer", "Gzip", "Kafka", "RollupStore",
                "Rollups", "TestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "RollupsTests", dependencies: ["Rollups", "TestSupport", "FlowmeterWire"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "RollupStoreTests", dependencies: ["RollupStore", "RollupStoreBenchmarks", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(name: "IngestBenchmarksTests", dependencies: ["IngestBenchmarks"], swiftSettings: strictSettings),
        .testTarget(
            name: "DetectorTests",
            dependencies: [
                "Detector", "DetectorBenchmarks", "Rollups", "FlowmeterModels", "FlowmeterWire", "TestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "SinkTests", dependencies: ["Sink", "Collector", "TestSupport", "FuzzTargets"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "FlowmeterCLITests",
            dependencies: ["FlowmeterCLI", "TestSupport", "RollupStore", "Rollups", "Detector", "Gzip"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "OperationsTests", dependencies: ["TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"], swiftSettings: strictSettings),
        .testTarget(
            name: "CollectorTests",
            dependencies: ["Collector", "Logging", "TestSupport", "FlowmeterWire"],
            swiftSettings: strictSettings
        ),
    ]
)
