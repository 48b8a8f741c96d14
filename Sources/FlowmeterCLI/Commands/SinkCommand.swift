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
                after the current poll. A store that fails as a whole (read-only after a failover, permission
                denied, disk full, unreachable) stalls the sink: nothing moves and nothing is dead-lettered until
                it is back, and /readyz on --ops-listen says why. See docs/sink.md.
                """,
            options: [
                SharedOptions.configFile,
                .value("kafka", "HOST:PORT[,…]", help: "Bootstrap servers."),
                SharedOptions.store,
                .value("group", "NAME", help: "Consumer group.", default: OptionDefaults.sink.groupID),
            ] + SharedOptions.sinkReading + SharedOptions.retention + [
                OpsListenOption.option,
                .value("log-format", "FORMAT", help: "json | logfmt.", default: "json"),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try arguments.parsed("log-format", as: "json or logfmt") { Logger.Format(rawValue: $0) }
        let logger = Logger(threshold: .info, format: format ?? .json)
        var configuration = try SharedOptions.sinkConfiguration(arguments)
        configuration.groupID = try arguments.required("group")
        var runtimeConfiguration = SinkRuntimeConfiguration(
            sink: configuration, storeURL: try arguments.required("store"))
        runtimeConfiguration.retention = try SharedOptions.retentionPolicy(arguments)
        runtimeConfiguration.pruneInterval = try SharedOptions.pruneInterval(arguments)
        runtimeConfiguration.opsListen = try OpsListenOption.address(arguments)
        let runtime: SinkRuntime
        do {
            runtime = try makeSink(runtimeConfiguration, logger: logger)
        } catch let error as RollupStoreError where error.code == .invalidURL {
            throw CommandUsageError("--store: \(error.message)", commandPath: arguments.commandPath)
        }
        logger.info(
            "sink started",
            [
                "kafka": configuration.bootstrapServers.joined(separator: ","), "group": configuration.groupID,
                "store": redactedStoreURL(runtimeConfiguration.storeURL),
            ])
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
                "refused": String(counters.refusedMessages),
            ])
        return 0
    }
}
