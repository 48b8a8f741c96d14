import Detector
import FlowmeterModels
import FlowmeterRuntime
import Foundation
import Lifecycle
import Logging
import RollupStore
import Rollups

/// `flowmeter watch`: every `--interval`, runs the detector (spike incidents, ungated types, new types) over the
/// store, opens and resolves alerts in it, and publishes the changes to `flowmeter.alerts.v1` and Alertmanager.
enum WatchCommand {
    static var command: Command {
        Command(
            name: "watch",
            abstract: "Detect spikes, ungated and new types over the store in a loop; publish alerts.",
            discussion: """
                Each pass looks at the last --since, opens alerts for new findings and resolves alerts whose finding
                is gone (the alert state lives in the store). Spikes alert once per incident (all the versions one
                cause hit), and resolve when the incident ends. With --owners, every alert carries a team label. Opened and resolved alerts go to the alerts topic
                (key = fingerprint) with --kafka, and every firing or resolved alert to Alertmanager's v2 API with
                --alertmanager. --once runs one pass and exits 0 when nothing fires, 3 when something does.
                SIGTERM or SIGINT stops the loop between passes.
                """,
            options: [
                SharedOptions.configFile,
                SharedOptions.store,
                .value("kafka", "HOST:PORT[,…]", help: "Publish alerts to the alerts topic."),
                .value("alerts-topic", "NAME", help: "Topic of alerts.", default: OptionDefaults.watch.alertsTopic),
                .value("alertmanager", "URL", help: "Alertmanager base URL, e.g. http://127.0.0.1:9093."),
                .value(
                    "interval", "DURATION", help: "Time between passes.",
                    default: OptionDefaults.duration(OptionDefaults.watch.interval, unit: "s")),
                .value(
                    "since", "DURATION", help: "The window each pass examines.",
                    default: OptionDefaults.duration(OptionDefaults.watch.window)),
                .value("app", "APPID", help: "Only this app."),
            ] + SharedOptions.ungatedThresholds + [
                OwnerOptions.owners,
                .flag("once", help: "Run one pass and exit."),
                OpsListenOption.option,
                .value("log-format", "FORMAT", help: "json | logfmt.", default: "json"),
            ] + SharedOptions.kafkaClient,
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let duration = "a positive duration such as 30s, 5m or 1h"
        let positive: (String) -> Duration? = { OptionValues.duration($0).flatMap { $0 > .zero ? $0 : nil } }
        var configuration = WatchConfiguration(storeURL: try arguments.required("store"))
        configuration.interval = try arguments.parsed("interval", as: duration, positive) ?? configuration.interval
        configuration.window = try arguments.parsed("since", as: duration, positive) ?? configuration.window
        configuration.ungated = try SharedOptions.ungatedFinder(arguments)
        configuration.notifier = try SharedOptions.alertmanager(arguments)
        if let text = arguments.value("kafka"), !text.isEmpty {
            configuration.bootstrapServers = try SharedOptions.brokers(arguments)
            configuration.kafkaProperties = try SharedOptions.kafkaClientOptions(arguments).properties
        }
        configuration.alertsTopic = try arguments.required("alerts-topic")
        configuration.appID = arguments.value("app")
        configuration.owners = try OwnerOptions.rules(arguments)
        configuration.opsListen = try OpsListenOption.address(arguments)
        let format = try arguments.parsed("log-format", as: "json or logfmt") { Logger.Format(rawValue: $0) }
        let logger = Logger(threshold: .info, format: format ?? .json)
        let watch: WatchRuntime
        do {
            watch = try makeWatch(configuration, logger: logger)
        } catch let error as RollupStoreError where error.code == .invalidURL {
            throw CommandUsageError("--store: \(error.message)", commandPath: arguments.commandPath)
        }
        if arguments.flag("once") {
            let evaluation = try await watch.pass.run()
            DetectorPass.log(evaluation, to: logger)
            if let producer = watch.producer { _ = await producer.shutdown(timeout: .seconds(10)) }
            return evaluation.opened.isEmpty && evaluation.continuing.isEmpty ? 0 : 3
        }
        try await watch.group.run()
        return 0
    }
}
