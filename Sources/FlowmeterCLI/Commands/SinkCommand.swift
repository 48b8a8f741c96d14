import Collector
import FlowmeterRuntime
import Foundation
import Lifecycle
import Logging
import RollupStore
import Sink

/// `flowmeter sink --kafka … --store …`: builds the store's rollups from `flowmeter.batches.v1`, exactly once, as a
/// consumer group (and merges the deploys and manifests topics) until SIGTERM or SIGINT.
enum SinkCommand {
    static var command: Command {
        Command(
            name: "sink",
            abstract: "Build the rollup store from the batches topic, exactly once (a consumer group).",
            discussion: """
                Per poll and partition, copies of batches counted within --dedupe-horizon are skipped, the rest
                become minute rollups, and the rollups, the counted batch ids and the partition's next offset go
                into the store in one transaction, fenced by the offset the step began from. A sink reads each
                partition from the offset the store holds, so a killed sink, a rebalance or a replay counts nothing
                twice and forgets nothing. Run several with the same --group to share the partitions. Records that
                are not batch records are written to --dead-letters and skipped. Every --prune-interval the store
                is pruned to --keep-minutes and --keep-hours (see flowmeter store prune). SIGTERM or SIGINT stops it
                after the current poll. See docs/sink.md.
                """,
            options: [
                .value("kafka", "HOST:PORT[,…]", help: "Bootstrap servers."),
                SharedOptions.store,
                .value("group", "NAME", help: "Consumer group.", default: "flowmeter-sink"),
                .value("batches-topic", "NAME", help: "Topic of batch records.", default: "flowmeter.batches.v1"),
                SharedOptions.dedupeHorizon,
                .value(
                    "deploys-topic", "NAME", help: "Topic of deploy markers (\"none\" reads none).",
                    default: "flowmeter.deploys.v1"),
                .value(
                    "manifests-topic", "NAME", help: "Topic of capability manifests (\"none\" reads none).",
                    default: "flowmeter.manifests.v1"),
                .value(
                    "max-batch", "N", help: "Most messages per poll (one store transaction per partition).",
                    default: "5000"),
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
        configuration.batchesTopic = try arguments.required("batches-topic")
        configuration.dedupeHorizon = try SharedOptions.dedupeHorizon(arguments)
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
                "counted": String(counters.applied), "duplicates": String(counters.duplicates),
                "events": String(counters.events), "fenced": String(counters.fenced),
                "bad_messages": String(counters.badMessages), "dead_letters": String(counters.deadLetters),
                "deploys": String(counters.deploys), "manifests": String(counters.manifests),
                "commits": String(counters.commits), "errors": String(counters.errors),
            ])
        return 0
    }
}
