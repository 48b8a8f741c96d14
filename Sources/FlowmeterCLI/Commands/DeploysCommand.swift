import Collector
import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups

/// `flowmeter deploys add|list`: records deploy markers (docs/api.md#deploy-markers) in the store and, with `--kafka`,
/// in `flowmeter.deploys.v1`; lists them.
enum DeploysCommand {
    static var command: Command {
        Command(
            name: "deploys",
            abstract: "Record and list backend deploy markers.",
            subcommands: [add, list]
        )
    }

    private static var add: Command {
        Command(
            name: "add",
            abstract: "Record a deploy in the store (and in Kafka with --kafka); prints its id.",
            discussion: """
                Times are RFC 3339 (2026-11-30T08:44:10Z) or 'now'. The same marker as POST /v1/deploys; a sink
                stores markers it reads from the deploys topic, so --kafka alone reaches a store a sink feeds.
                Exit status: 0 recorded, 1 error, 2 usage error.
                """,
            options: [
                .value("service", "NAME", help: "The deployed service, e.g. page-api."),
                .value("version", "VERSION", help: "The deployed version, e.g. 2026.11.30-2."),
                .value("finished-at", "TIME", help: "When the deploy finished (RFC 3339 or now)."),
                .value("started-at", "TIME", help: "When the deploy started."),
                .value("environment", "NAME", help: "The environment, e.g. production."),
                .value("commit", "SHA", help: "The deployed commit."),
                .value("url", "URL", help: "A link to the build."),
                SharedOptions.store,
                .flag("no-store", help: "Record in Kafka only (needs --kafka)."),
                .value("kafka", "HOST:PORT[,…]", help: "Also publish to the deploys topic."),
                .value(
                    "deploys-topic", "NAME", help: "Topic of deploy markers.",
                    default: OptionDefaults.collector.topics.deploys),
            ] + SharedOptions.kafkaClient,
            run: { arguments in try await runAdd(arguments) }
        )
    }

    private static var list: Command {
        Command(
            name: "list",
            abstract: "List recorded deploys, newest last.",
            options: [
                .value("since", "DURATION", help: "How far back (90m, 24h, 7d).", default: "7d"),
                .value("from", "TIME", help: "Start (RFC 3339); overrides --since."),
                .value("to", "TIME", help: "End (RFC 3339).", default: "now"),
                SharedOptions.store,
                .value("format", "FORMAT", help: "table | json.", default: "table"),
            ],
            run: { arguments in try runList(arguments) }
        )
    }

    private static func runAdd(_ arguments: ParsedArguments) async throws -> Int32 {
        let marker = DeployMarker(
            service: try arguments.required("service"), version: try arguments.required("version"),
            environment: arguments.value("environment"),
            startedAt: try time(arguments, "started-at"),
            finishedAt: try time(arguments, "finished-at")
                ?? {
                    throw CommandUsageError(
                        "missing required option --finished-at", commandPath: arguments.commandPath)
                }(),
            commit: arguments.value("commit"), url: arguments.value("url"))
        let toStore = !arguments.flag("no-store")
        let toKafka = arguments.value("kafka").map { !$0.isEmpty } ?? false
        guard toStore || toKafka else {
            throw CommandUsageError("--no-store needs --kafka", commandPath: arguments.commandPath)
        }
        if toStore {
            let store = try SharedOptions.openStore(arguments)
            try store.recordDeploy(marker)
        }
        if toKafka {
            var configuration = KafkaProducerConfiguration(bootstrapServers: try SharedOptions.brokers(arguments))
            configuration.clientID = "flowmeter-deploys"
            configuration.messageTimeout = .seconds(30)
            configuration.statisticsInterval = .zero
            configuration.additionalProperties = try SharedOptions.kafkaClientOptions(arguments).properties
            let producer = try KafkaProducer(configuration: configuration)
            let topic = try arguments.required("deploys-topic")
            _ = try await producer.send(
                KafkaProducerMessage(
                    topic: topic, key: Array(marker.service.utf8), value: marker.jsonBytes(),
                    headers: KafkaHeader.json(schema: topic)))
            _ = await producer.shutdown(timeout: .seconds(5))
        }
        arguments.output.print(marker.id)
        return 0
    }

    private static func runList(_ arguments: ParsedArguments) throws -> Int32 {
        let path = arguments.commandPath
        let format = try arguments.required("format")
        guard format == "table" || format == "json" else {
            throw CommandUsageError("invalid value '\(format)' for --format: expected table or json", commandPath: path)
        }
        let to = try time(arguments, "to") ?? Timestamp(Date())
        let from: Timestamp
        if let given = try time(arguments, "from") {
            from = given
        } else {
            let since =
                try arguments.parsed("since", as: "a duration such as 90m, 24h or 7d", OptionValues.duration)
                ?? .seconds(7 * 86_400)
            from = Timestamp(
                secondsSinceEpoch: to.secondsSinceEpoch - since.components.seconds, nanoseconds: to.nanoseconds)
        }
        let deploys = try SharedOptions.openStore(arguments).deploys(from: from, to: to)
        if format == "json" {
            var text = #"{"from":"\#(from.rfc3339String)","to":"\#(to.rfc3339String)","deploys":["#
            text += deploys.map { String(decoding: $0.jsonBytes(), as: UTF8.self) }.joined(separator: ",")
            text += "]}"
            arguments.output.print(text)
            return 0
        }
        // Markers come from anyone holding an admin key or writing the deploys topic: TextTable shows them escaped.
        var table = TextTable(columns: [
            .text("FINISHED"), .text("SERVICE"), .text("VERSION"), .text("ENVIRONMENT"), .text("COMMIT"), .text("ID"),
        ])
        table.width = .max
        for deploy in deploys {
            table.append([
                deploy.finishedAt.rfc3339String, deploy.service, deploy.version, deploy.environment ?? "-",
                deploy.commit ?? "-", deploy.id,
            ])
        }
        arguments.output.print(table.rendered())
        if deploys.isEmpty { arguments.output.print("(no deploys between \(from) and \(to))") }
        return 0
    }

    /// An RFC 3339 time or `now`; nil when the option is not given.
    static func time(_ arguments: ParsedArguments, _ name: String) throws(CommandUsageError) -> Timestamp? {
        try arguments.parsed(name, as: "an RFC 3339 time such as 2026-11-30T08:44:10Z, or now") { text in
            text == "now" ? Timestamp(Date()) : Timestamp(rfc3339: text)
        }
    }
}
