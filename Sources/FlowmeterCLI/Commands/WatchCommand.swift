import Collector
import Detector
import FlowmeterModels
import Foundation
import Kafka
import Lifecycle
import RollupStore
import Rollups

/// `flowmeter watch`: every `--interval`, runs the detector (spikes, ungated types, new types) over the store,
/// opens and resolves alerts in it, and publishes the changes to `flowmeter.alerts.v1` and Alertmanager.
enum WatchCommand {
    static var command: Command {
        Command(
            name: "watch",
            abstract: "Detect spikes, ungated and new types over the store in a loop; publish alerts.",
            discussion: """
                Each pass looks at the last --since, opens alerts for new findings and resolves alerts whose finding
                is gone (the alert state lives in the store). Opened and resolved alerts go to the alerts topic
                (key = fingerprint) with --kafka, and every firing or resolved alert to Alertmanager's v2 API with
                --alertmanager. --once runs one pass and exits 0 when nothing fires, 3 when something does.
                SIGTERM or SIGINT stops the loop between passes.
                """,
            options: [
                SinkCommand.storeOption,
                .value("kafka", "HOST:PORT[,…]", help: "Publish alerts to the alerts topic."),
                .value("alerts-topic", "NAME", help: "Topic of alerts.", default: "flowmeter.alerts.v1"),
                .value("alertmanager", "URL", help: "Alertmanager base URL, e.g. http://127.0.0.1:9093."),
                .value("interval", "DURATION", help: "Time between passes.", default: "60s"),
                .value("since", "DURATION", help: "The window each pass examines.", default: "1h"),
                .value("app", "APPID", help: "Only this app."),
                .value("min-installs", "N", help: "Installs before a type counts as ungated.", default: "5"),
                .value("min-events", "N", help: "Events before a type counts as ungated.", default: "20"),
                .flag("once", help: "Run one pass and exit."),
                .value("log-format", "FORMAT", help: "json | logfmt.", default: "json"),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    /// What one pass needs.
    struct Pass: Sendable {
        let store: any RollupStore
        let producer: KafkaProducer?
        let topic: String
        let notifier: AlertmanagerNotifier?
        let window: Duration
        let appID: String?
        let ungated: UngatedTypeFinder

        /// Runs the detectors and the evaluator, then publishes; returns the evaluation.
        func run(now: Timestamp = Timestamp(Date())) async throws -> AlertEvaluation {
            let evaluation = try await SinkCommand.onThread { () -> Result<AlertEvaluation, any Error> in
                Result { try evaluate(now: now) }
            }.get()
            if let producer {
                for message in evaluation.messages {
                    _ = try await producer.send(
                        KafkaProducerMessage(
                            topic: topic, key: message.key, value: message.value,
                            headers: [
                                KafkaHeader(name: "content-type", value: "application/json"),
                                KafkaHeader(name: "schema", value: topic),
                            ]))
                }
            }
            if let notifier {
                try await notifier.send(evaluation.alertmanagerAlerts)
            }
            return evaluation
        }

        private func evaluate(now: Timestamp) throws -> AlertEvaluation {
            let from = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - window.components.seconds)
            var findings: [AlertFinding] = []
            findings += try SpikeDetector().report(reader: store, from: from, to: now, appID: appID).spikes
                .map(AlertFinding.init(spike:))
            findings += try ungated.report(reader: store, from: from, to: now, appID: appID).ungated
                .map(AlertFinding.init(ungated:))
            findings += try NewTypeFinder().newTypes(reader: store, from: from, to: now, appID: appID)
                .map(AlertFinding.init(newType:))
            return try AlertEvaluator(store: store).evaluate(
                findings, at: now, scope: AlertEvaluator.Scope(appID: appID))
        }
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let duration = "a positive duration such as 30s, 5m or 1h"
        let positive: (String) -> Duration? = { ServeCommand.parseDuration($0).flatMap { $0 > .zero ? $0 : nil } }
        let interval = try arguments.parsed("interval", as: duration, positive) ?? .seconds(60)
        let window = try arguments.parsed("since", as: duration, positive) ?? .seconds(3600)
        let ungated = try ungatedFinder(arguments)
        let notifier = try alertmanager(arguments)
        var producer: KafkaProducer?
        if let text = arguments.value("kafka"), !text.isEmpty {
            var configuration = KafkaProducerConfiguration(bootstrapServers: try SinkCommand.brokers(arguments))
            configuration.clientID = "flowmeter-watch"
            configuration.messageTimeout = .seconds(30)
            configuration.statisticsInterval = .zero
            producer = try KafkaProducer(configuration: configuration)
        }
        let format = try arguments.parsed("log-format", as: "json or logfmt") { CollectorLogger.Format(rawValue: $0) }
        let logger = CollectorLogger(threshold: .info, format: format ?? .json)
        let pass = Pass(
            store: try SinkCommand.openStore(arguments), producer: producer,
            topic: try arguments.required("alerts-topic"),
            notifier: notifier, window: window, appID: arguments.value("app"), ungated: ungated)

        if arguments.flag("once") {
            let evaluation = try await pass.run()
            log(evaluation, to: logger)
            if let producer { _ = await producer.shutdown(timeout: .seconds(10)) }
            return evaluation.opened.isEmpty && evaluation.continuing.isEmpty ? 0 : 3
        }
        let signals = TerminationSignals()
        let loop = loop(pass, every: interval, logger: logger)
        _ = await signals.wait()
        _ = await stop(loop, within: .seconds(15))
        if let producer { _ = await producer.shutdown(timeout: .seconds(10)) }
        return 0
    }

    /// The ungated-type finder with `--min-installs` and `--min-events`, which `watch` and `serve` both declare.
    static func ungatedFinder(_ arguments: ParsedArguments) throws(CommandUsageError) -> UngatedTypeFinder {
        var configuration = UngatedTypeFinder.Configuration()
        configuration.minInstalls = try arguments.parsed("min-installs", as: "a count") { Int64($0) } ?? 5
        configuration.minEvents = try arguments.parsed("min-events", as: "a count") { Int64($0) } ?? 20
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

    /// Runs `pass` now and then every `interval` until the task is cancelled, logging each pass (counts and
    /// fingerprints only) and each failure; a failed pass is retried at the next interval.
    static func loop(_ pass: Pass, every interval: Duration, logger: CollectorLogger) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                do {
                    log(try await pass.run(), to: logger)
                } catch {
                    logger.error("watch pass failed", ["error": String(describing: error)])
                }
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
            }
        }
    }

    /// Cancels `loop` and waits up to `bound` for the pass in progress to end; returns whether it ended.
    ///
    /// A pass waits for Kafka to persist its alerts, which with brokers down could take the producer's message
    /// timeout; the bound lets a process stop anyway (the alert state is in the store, so the next run re-sends).
    static func stop(_ loop: Task<Void, Never>, within bound: Duration) async -> Bool {
        loop.cancel()
        let (ended, continuation) = AsyncStream.makeStream(of: Bool.self)
        Task {
            await loop.value
            continuation.yield(true)
        }
        Task {
            try? await Task.sleep(for: bound)
            continuation.yield(false)
        }
        for await hasEnded in ended {
            return hasEnded
        }
        return false
    }

    private static func log(_ evaluation: AlertEvaluation, to logger: CollectorLogger) {
        let firing = evaluation.opened + evaluation.continuing
        let count: (AlertState.Kind) -> String = { kind in String(firing.count { $0.kind == kind }) }
        logger.info(
            "watch pass",
            [
                "opened": String(evaluation.opened.count), "continuing": String(evaluation.continuing.count),
                "resolved": String(evaluation.resolved.count), "spikes": count(.spike),
                "ungated_types": count(.ungatedType), "new_types": count(.newType),
            ])
        for alert in evaluation.opened {
            logger.warning(
                "alert opened", ["fingerprint": alert.fingerprint, "summary": alert.annotations["summary"] ?? ""])
        }
        for alert in evaluation.resolved {
            logger.info("alert resolved", ["fingerprint": alert.fingerprint])
        }
    }
}
