import Collector
import Detector
import FlowmeterRuntime
import Foundation
import Kafka
import RollupStore
import Sink

/// The options several commands share, declared and parsed in one place: the store, Kafka's bootstrap servers,
/// the dead-letter file, and the detector's thresholds. No command reaches into another for these.
enum SharedOptions {
    /// The default store when neither `--store` nor `FLOWMETER_STORE` names one: `flowmeter.sqlite` in the working
    /// directory, the file `flowmeter serve --store flowmeter.sqlite` writes.
    static let defaultStore = "flowmeter.sqlite"

    /// The `--store` option with its default, as every query-side command declares it.
    static let store = CommandOption.value(
        "store", "PATH|URL", help: "Rollup store: an SQLite path, sqlite:PATH or postgres://….",
        default: defaultStore)

    /// Where `sink` and `serve --store` write the messages they cannot use.
    static let deadLetters = CommandOption.value(
        "dead-letters", "FILE",
        help: "Messages the sink cannot decode or store (JSON Lines, made on the first one).",
        default: ServeConfiguration.defaultDeadLetterPath)

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

    /// `--kafka-option KEY=VALUE` and `--kafka-option-file KEY=PATH`: librdkafka properties for every Kafka client the
    /// command makes (TLS, SASL, timeouts), also read from `FLOWMETER_KAFKA_OPTION_<KEY>` (and `…_<KEY>_FILE`) and
    /// from a `kafka` object in `--config`. docs/collector.md, Kafka connection, lists them.
    static let kafkaClient: [CommandOption] = [
        .keyValues(
            "kafka-option", "KEY=VALUE",
            help: "A librdkafka property for every Kafka client (security.protocol=SASL_SSL, …); repeatable."),
        .keyValues(
            "kafka-option-file", "KEY=PATH",
            help: "A librdkafka property whose value is a file's content (a password); repeatable."),
    ]

    /// `--config FILE` for commands other than `serve`: a JSON object of option names, where `kafka` may be an
    /// object of librdkafka properties.
    static let configFile = CommandOption.value(
        "config", "FILE", help: "JSON object of option names to values (\"kafka\": {librdkafka properties}).")

    /// The librdkafka properties of ``kafkaClient`` (command line over environment over `--config`, per key; a file's
    /// value over a plain one), checked by librdkafka; a malformed pair, an unreadable file, or a key that is
    /// reserved, unknown or wrongly valued is a usage error. Secret values never appear in the error.
    static func kafkaClientOptions(_ arguments: ParsedArguments) throws(CommandUsageError) -> KafkaClientOptions {
        var options = KafkaClientOptions()
        for pair in arguments.values("kafka-option") {
            let (key, value) = try keyValue(pair, option: "kafka-option", arguments)
            options.set(key, to: value)
        }
        for pair in arguments.values("kafka-option-file") {
            let (key, path) = try keyValue(pair, option: "kafka-option-file", arguments)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandUsageError(
                    "--kafka-option-file \(key): cannot read the file '\(path)'", commandPath: arguments.commandPath)
            }
            // A secret file written by `echo` ends in a newline that is not part of the password.
            var value = String(decoding: data, as: UTF8.self)
            while let last = value.last, last == "\n" || last == "\r" { value.removeLast() }
            options.set(key, to: value)
        }
        do {
            return try options.validated()
        } catch {
            throw CommandUsageError("Kafka options: \(error.message)", commandPath: arguments.commandPath)
        }
    }

    private static func keyValue(
        _ pair: String, option: String, _ arguments: ParsedArguments
    ) throws(CommandUsageError) -> (key: String, value: String) {
        guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
            // The text is not quoted: it may be a password given without its key.
            throw CommandUsageError(
                "invalid value for --\(option): expected KEY=\(option.hasSuffix("-file") ? "PATH" : "VALUE")",
                commandPath: arguments.commandPath)
        }
        let key = pair[..<equals].trimmingCharacters(in: .whitespaces)
        return (key, String(pair[pair.index(after: equals)...]))
    }

    /// Opens the store `--store` names (default `FLOWMETER_STORE`, then `./flowmeter.sqlite`); a bad URL is a
    /// usage error, a store that cannot be opened an error. Rows the store cannot read are reported to `warnings`
    /// (by default one warning per table on the command's standard error).
    static func openStore(
        _ arguments: ParsedArguments, warnings: UnreadableRowsWarning? = nil
    ) throws -> any RollupStore {
        let url = try arguments.required("store")
        var options = RollupStoreOptions()
        options.onUnreadableRows = (warnings ?? UnreadableRowsWarning(arguments.output)).handler
        do {
            return try openRollupStore(url: url, options: options)
        } catch let error as RollupStoreError where error.code == .invalidURL {
            throw CommandUsageError("--store: \(error.message)", commandPath: arguments.commandPath)
        }
    }

    /// `--min-installs`, `--min-events` and `--regression-quiet` as `watch`, `serve` and `report` declare them (`ungated`
    /// words its own help); ``ungatedFinder(_:)`` reads them.
    static let ungatedThresholds: [CommandOption] = [
        .value(
            "min-installs", "N", help: "Installs before a type counts as ungated.",
            default: String(OptionDefaults.ungated.minInstalls)),
        .value(
            "min-events", "N", help: "Events before a type counts as ungated.",
            default: String(OptionDefaults.ungated.minEvents)),
        .value(
            "regression-quiet", "DURATION", help: "Quiet before an ungated type's return is a regression.",
            default: OptionDefaults.duration(OptionDefaults.ungated.regressionQuiet)),
    ]

    /// The ungated-type finder with `--min-installs`, `--min-events` and `--regression-quiet`, which `watch` and
    /// `serve` both declare.
    static func ungatedFinder(_ arguments: ParsedArguments) throws(CommandUsageError) -> UngatedTypeFinder {
        var configuration = UngatedTypeFinder.Configuration()
        configuration.minInstalls =
            try arguments.parsed("min-installs", as: "a count") { Int64($0) } ?? configuration.minInstalls
        configuration.minEvents =
            try arguments.parsed("min-events", as: "a count") { Int64($0) } ?? configuration.minEvents
        configuration.regressionQuiet = try regressionQuiet(arguments)
        return UngatedTypeFinder(configuration: configuration)
    }

    /// The notifier for `--alertmanager URL`, nil when the option is absent; a URL that is not http(s) is a usage
    /// error.
    static func alertmanager(_ arguments: ParsedArguments) throws(CommandUsageError) -> AlertmanagerNotifier? {
        guard let text = arguments.value("alertmanager"), !text.isEmpty else { return nil }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw CommandUsageError(
                "invalid value '\(text)' for --alertmanager: expected an http URL", commandPath: arguments.commandPath)
        }
        return AlertmanagerNotifier(baseURL: url)
    }

    /// `--regression-quiet`: how long a type must have gone unreported for its return to be a regression.
    static func regressionQuiet(_ arguments: ParsedArguments) throws(CommandUsageError) -> Duration {
        let seconds = try arguments.parsed("regression-quiet", as: "a duration such as 48h or 3d") {
            OptionValues.wholeSeconds($0)
        }
        return seconds.map { .seconds($0) } ?? OptionDefaults.ungated.regressionQuiet
    }

    /// A non-negative count option, or a usage error.
    static func count(_ arguments: ParsedArguments, _ name: String) throws(CommandUsageError) -> Int64? {
        try arguments.parsed(name, as: "a whole number ≥ 0") { Int64($0).flatMap { $0 >= 0 ? $0 : nil } }
    }

    /// `--keep-minutes`, `--keep-hours`: what every command that prunes keeps.
    static let keep: [CommandOption] = [
        .value(
            "keep-minutes", "DURATION", help: "How long minute rows are kept (then only hours).",
            default: OptionDefaults.duration(seconds: OptionDefaults.retention.keepMinutes, unit: "d")),
        .value(
            "keep-hours", "DURATION", help: "How long hour rows are kept.",
            default: OptionDefaults.duration(seconds: OptionDefaults.retention.keepHours, unit: "d")),
    ]

    /// `--keep-minutes`, `--keep-hours` and `--prune-interval`: retention in a long-running sink (`sink`, `serve`).
    static let retention: [CommandOption] =
        keep + [
            .value(
                "prune-interval", "DURATION", help: "Time between prunes of the store (0: never).",
                default: OptionDefaults.duration(RetentionPolicy.defaultPruneInterval))
        ]

    /// The retention `--keep-minutes` and `--keep-hours` name, or a usage error.
    static func retentionPolicy(_ arguments: ParsedArguments) throws(CommandUsageError) -> RetentionPolicy {
        var policy = RetentionPolicy()
        let duration = "a positive duration such as 36h, 14d or 2w"
        policy.keepMinutes =
            try arguments.parsed("keep-minutes", as: duration, OptionValues.wholeSeconds) ?? policy.keepMinutes
        policy.keepHours =
            try arguments.parsed("keep-hours", as: duration, OptionValues.wholeSeconds) ?? policy.keepHours
        if let problem = policy.problem {
            throw CommandUsageError("--keep-minutes and --keep-hours: \(problem)", commandPath: arguments.commandPath)
        }
        return policy
    }

    /// `--prune-interval` as a duration (zero: never), or a usage error.
    static func pruneInterval(_ arguments: ParsedArguments) throws(CommandUsageError) -> Duration {
        let seconds = try arguments.parsed("prune-interval", as: "a duration such as 1h, or 0 for never") {
            $0 == "0" ? 0 : OptionValues.wholeSeconds($0)
        }
        return seconds.map { .seconds($0) } ?? RetentionPolicy.defaultPruneInterval
    }

    /// `--dedupe-horizon`: how long a sink remembers a counted batch (docs/api.md#ingest), for `sink`, `serve` and
    /// `store rebuild`.
    static let dedupeHorizon = CommandOption.value(
        "dedupe-horizon", "DURATION",
        help: "How long a counted batch id is remembered, so a retried copy is not counted again.",
        default: OptionDefaults.duration(OptionDefaults.sink.dedupeHorizon))

    /// What a sink reads and how, for `sink` and `store rebuild` (after `--kafka` and `--store`): the topics, the
    /// dedupe horizon, the poll size, the dead-letter file and the Kafka client's properties.
    static let sinkReading: [CommandOption] =
        [
            .value("batches-topic", "NAME", help: "Topic of batch records.", default: OptionDefaults.sink.batchesTopic),
            dedupeHorizon,
            .value(
                "deploys-topic", "NAME", help: "Topic of deploy markers (\"none\" reads none).",
                default: OptionDefaults.sink.deploysTopic ?? "none"),
            .value(
                "manifests-topic", "NAME", help: "Topic of capability manifests (\"none\" reads none).",
                default: OptionDefaults.sink.manifestsTopic ?? "none"),
            .value(
                "max-batch", "N", help: "Most messages per poll (all their partitions counted in one step).",
                default: String(OptionDefaults.sink.maxBatch)),
            .value(
                "step-interval", "DURATION",
                help: "How long a poll gathers messages after the first, so one transaction counts more (0 for none).",
                default: OptionDefaults.duration(OptionDefaults.sink.stepInterval)),
            .value(
                "max-step-duration", "DURATION",
                help: "How long one step (one store transaction) may count full polls while the sink is behind.",
                default: OptionDefaults.duration(OptionDefaults.sink.maxStepDuration)),
            .value(
                "max-step-rollups", "N", help: "Most rollups one step holds before it commits (bounds its memory).",
                default: String(OptionDefaults.sink.maxStepRollups)),
            deadLetters,
        ] + kafkaClient

    /// A sink's configuration from `--kafka` and the options of ``sinkReading`` (``kafkaClient`` as its consumer's
    /// properties), or a usage error.
    static func sinkConfiguration(_ arguments: ParsedArguments) throws(CommandUsageError) -> RollupSinkConfiguration {
        var configuration = RollupSinkConfiguration(bootstrapServers: try brokers(arguments))
        configuration.consumerProperties = try kafkaClientOptions(arguments).properties
        configuration.deadLetterPath = try arguments.required("dead-letters")
        configuration.batchesTopic = try arguments.required("batches-topic")
        configuration.dedupeHorizon = try dedupeHorizon(arguments)
        let deploys = try arguments.required("deploys-topic")
        configuration.deploysTopic = deploys == "none" ? nil : deploys
        let manifests = try arguments.required("manifests-topic")
        configuration.manifestsTopic = manifests == "none" ? nil : manifests
        guard let batch = Int(try arguments.required("max-batch")), batch > 0 else {
            throw CommandUsageError(
                "invalid value for --max-batch: expected a positive integer", commandPath: arguments.commandPath)
        }
        configuration.maxBatch = batch
        configuration.stepInterval =
            try arguments.parsed("step-interval", as: "a duration from 0 to 60s, such as 500ms or 2s") {
                OptionValues.duration($0).flatMap { $0 <= .seconds(60) ? $0 : nil }
            } ?? OptionDefaults.sink.stepInterval
        configuration.maxStepDuration =
            try arguments.parsed("max-step-duration", as: "a duration from 0 to 60s, such as 2s") {
                OptionValues.duration($0).flatMap { $0 <= .seconds(60) ? $0 : nil }
            } ?? OptionDefaults.sink.maxStepDuration
        guard let rollups = Int(try arguments.required("max-step-rollups")), rollups > 0 else {
            throw CommandUsageError(
                "invalid value for --max-step-rollups: expected a positive integer", commandPath: arguments.commandPath)
        }
        configuration.maxStepRollups = rollups
        return configuration
    }

    /// `--dedupe-horizon` as a duration (at least a minute), or a usage error.
    static func dedupeHorizon(_ arguments: ParsedArguments) throws(CommandUsageError) -> Duration {
        let seconds = try arguments.parsed("dedupe-horizon", as: "a duration of at least 1m, such as 1h or 6h") {
            OptionValues.wholeSeconds($0).flatMap { $0 >= 60 ? $0 : nil }
        }
        return seconds.map { .seconds($0) } ?? OptionDefaults.sink.dedupeHorizon
    }
}
