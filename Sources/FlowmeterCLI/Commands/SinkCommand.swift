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
    /// The default store when neither `--store` nor `FLOWMETER_STORE` names one: `flowmeter.sqlite` in the working
    /// directory, the file `flowmeter serve --store flowmeter.sqlite` writes.
    static let defaultStore = "flowmeter.sqlite"

    /// The `--store` option with its default, as every query-side command declares it.
    static let storeOption = CommandOption.value(
        "store", "PATH|URL", help: "Rollup store: an SQLite path, sqlite:PATH or postgres://….",
        default: defaultStore)

    static var command: Command {
        Command(
            name: "sink",
            abstract: "Merge the rollups, deploys and manifests topics into a rollup store (a consumer group).",
            discussion: """
                Each poll batch goes into the store in one transaction, idempotent by message id, and only then are
                the offsets committed: a sink killed in between replays the batch and counts nothing twice. Bad
                messages are counted, written to --dead-letters and skipped. Run several with the same --group to share the partitions.
                SIGTERM or SIGINT stops it after the current batch. See docs/sink.md.
                """,
            options: [
                .value("kafka", "HOST:PORT[,…]", help: "Bootstrap servers."),
                storeOption,
                .value("group", "NAME", help: "Consumer group.", default: "flowmeter-sink"),
                .value("rollups-topic", "NAME", help: "Topic of partial rollups.", default: "flowmeter.rollups.v1"),
                .value(
                    "deploys-topic", "NAME", help: "Topic of deploy markers (\"none\" reads none).",
                    default: "flowmeter.deploys.v1"),
                .value(
                    "manifests-topic", "NAME", help: "Topic of capability manifests (\"none\" reads none).",
                    default: "flowmeter.manifests.v1"),
                .value("max-batch", "N", help: "Most messages per store transaction.", default: "5000"),
                deadLettersOption,
                .value("log-format", "FORMAT", help: "json | logfmt.", default: "json"),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        let servers = try brokers(arguments)
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
        let runtime: SinkRuntime
        do {
            runtime = try makeSink(
                SinkRuntimeConfiguration(sink: configuration, storeURL: try arguments.required("store")),
                logger: logger)
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

    /// The `--kafka` bootstrap servers, or a usage error.
    static func brokers(_ arguments: ParsedArguments) throws(CommandUsageError) -> [String] {
        let text = try arguments.required("kafka")
        guard case .brokers(let servers) = CollectorConfiguration.KafkaMode(text) else {
            throw CommandUsageError(
                "invalid value '\(text)' for --kafka: expected HOST:PORT[,HOST:PORT…]",
                commandPath: arguments.commandPath)
        }
        return servers
    }

    /// Where `sink` and `serve --store` write the messages they cannot use.
    static let deadLettersOption = CommandOption.value(
        "dead-letters", "FILE",
        help: "Messages the sink cannot decode or store (JSON Lines, made on the first one).",
        default: "flowmeter-dead-letters.jsonl")

    /// Opens the store `--store` names (default `FLOWMETER_STORE`, then `./flowmeter.sqlite`); a bad URL is a
    /// usage error, a store that cannot be opened an error. Rows the store cannot read are reported to `warnings`
    /// (by default one warning per table on the command's standard error).
    static func openStore(
        _ arguments: ParsedArguments, warnings: UnreadableRowsWarning? = nil
    ) throws -> any RollupStore {
        let url = try arguments.required("store")
        var options = RollupStoreOptions()
        options.onUnreadableRows = (warnings ?? UnreadableRowsWarning(.output(arguments.output))).handler
        do {
            return try openRollupStore(url: url, options: options)
        } catch let error as RollupStoreError where error.code == .invalidURL {
            throw CommandUsageError("--store: \(error.message)", commandPath: arguments.commandPath)
        }
    }

    /// Runs blocking work on a thread of its own, off the cooperative pool.
    static func onThread<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await Lifecycle.onThread(named: "flowmeter-blocking", work)
    }
}
