import Collector
import FlowmeterRuntime
import Foundation
import Lifecycle
import Logging
import RollupStore
import Sink

/// `flowmeter sink --kafka … --store …`: merges `flowmeter.rollups.v1` (and the deploys and manifests topics) into a
/// store as a consumer group until SIGTERM or SIGINT; also the home of the store options every store command shares.
enum SinkCommand {
    static var command: Command {
        Command(
            name: "sink",
            abstract: "Merge the rollups, deploys and manifests topics into a rollup store (a consumer group).",
            discussion: """
                Each poll batch goes into the store in one transaction, idempotent by message id, and only then are
                the offsets committed: a sink killed in between replays the batch and counts nothing twice. Bad
                messages are counted, written to --dead-letters and skipped. Run several with the same --group to share the partitions.
                Collectors' watermarks are recorded too, so queries can say how fresh the store is. Every
                --prune-interval the store is pruned to --keep-minutes and --keep-hours (see flowmeter store prune).
                SIGTERM or SIGINT stops it after the current batch. See docs/sink.md.
                """,
            options: [
                .value("kafka", "HOST:PORT[,…]", help: "Bootstrap servers."),
                SharedOptions.store,
                .value("group", "NAME", help: "Consumer group.", default: "flowmeter-sink"),
                .value("rollups-topic", "NAME", help: "Topic of partial rollups.", default: "flowmeter.rollups.v1"),
                .value(
                    "deploys-topic", "NAME", help: "Topic of deploy markers (\"none\" reads none).",
                    default: "flowmeter.deploys.v1"),
                .value(
                    "manifests-topic", "NAME", help: "Topic of capability manifests (\"none\" reads none).",
                    default: "flowmeter.manifests.v1"),
                .value("max-batch", "N", help: "Most messages per store transaction.", default: "5000"),
                SharedOptions.deadLetters,
            ] + SharedOptions.retention + [
                .value("log-format", "FORMAT", help: "json | logfmt.", default: "json")
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        let servers = try SharedOptions.brokers(arguments)
        let format = try arguments.parsed("log-format", as: "json or logfmt") { Logger.Format(rawValue: $0) }
        let logger = Logger(threshold: .info, format: format ?? .json)
        var configuration = RollupSinkConfiguration(bootstrapServers: servers)
        configuration.deadLetterPath = try arguments.required("dead-letters")
        configuration.groupID = try arguments.required("group")
        configuration.rollupsTopic = try arguments.required("rollups-topic")
        let deploys = try arguments.required("deploys-topic")
        configuration.deploysTopic = deploys == "none" ? nil : deploys
        let manifests = try arguments.required("manifests-topic")
        configuration.manifestsTopic = manifests == "none" ? nil : manifests
        guard let batch = Int(try arguments.required("max-batch")), batch > 0 else {
            throw CommandUsageError("invalid value for --max-batch: expected a positive integer", commandPath: path)
        }
        configuration.maxBatch = batch
        var runtimeConfiguration = SinkRuntimeConfiguration(
            sink: configuration, storeURL: try arguments.required("store"))
        runtimeConfiguration.retention = try SharedOptions.retentionPolicy(arguments)
        runtimeConfiguration.pruneInterval = try SharedOptions.pruneInterval(arguments)
        let runtime: SinkRuntime
        do {
            runtime = try makeSink(runtimeConfiguration, logger: logger)
        } catch let error as RollupStoreError where error.code == .invalidURL {
            throw CommandUsageError("--store: \(error.message)", commandPath: path)
        }
        logger.info("sink started", ["kafka": servers.joined(separator: ","), "group": configuration.groupID])
        try await runtime.group.run()
        let counters = runtime.sink.counters
        logger.info(
            "sink stopped",
            [
                "applied": String(counters.applied), "duplicates": String(counters.duplicates),
                "bad_messages": String(counters.badMessages), "dead_letters": String(counters.deadLetters),
                "deploys": String(counters.deploys), "manifests": String(counters.manifests),
                "commits": String(counters.commits), "errors": String(counters.errors),
            ])
        return 0
    }
}
