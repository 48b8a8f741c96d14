import Collector
import Foundation
import Kafka

/// `flowmeter spool inspect|replay-dead-letters`: what a collector's disk spool holds, and the replay of the
/// records Kafka refused for good (its dead-letter segment) once the cause is fixed.
enum SpoolCommand {
    static var command: Command {
        Command(
            name: "spool",
            abstract: "Inspect a collector's disk spool; replay its dead letters.",
            subcommands: [inspect, replayDeadLetters]
        )
    }

    private static let directory = CommandOption.value(
        "spool-dir", "DIR", help: "The collector's spool directory (its --spool).",
        default: OptionDefaults.spoolDirectory)

    private static var inspect: Command {
        Command(
            name: "inspect",
            abstract: "Count the segments, records and dead letters a spool directory holds.",
            discussion: """
                Reads the files without taking the spool's lock, so it also works while the collector runs (whose
                replay may have settled some records since). Exit status: 0 no dead letters, 3 dead letters
                waiting, 1 error, 2 usage error.
                """,
            options: [directory, .value("format", "FORMAT", help: "text | json.", default: "text")],
            run: { arguments in try runInspect(arguments) }
        )
    }

    private static var replayDeadLetters: Command {
        Command(
            name: "replay-dead-letters",
            abstract: "Produce the records Kafka refused for good to Kafka again.",
            discussion: """
                Claims the spool's dead-letter segment (dead-letters.seg; safe while the collector runs), produces
                its records in order and removes it once each record was persisted or written back to
                dead-letters.seg (refused again, or not delivered). Prints progress to standard error and a
                summary. Exit status: 0 every record replayed, 1 some kept again or an error, 2 usage error.
                """,
            options: [
                directory,
                .value("kafka", "HOST:PORT[,…]", help: "Kafka bootstrap servers."),
                .value("timeout", "DURATION", help: "How long each record may wait for Kafka.", default: "60s"),
            ],
            run: { arguments in try await runReplay(arguments) }
        )
    }

    private static func runInspect(_ arguments: ParsedArguments) throws -> Int32 {
        let format = try arguments.required("format")
        guard format == "text" || format == "json" else {
            throw CommandUsageError(
                "invalid value '\(format)' for --format: expected text or json", commandPath: arguments.commandPath)
        }
        let directory = try arguments.required("spool-dir")
        let inspection = try SpoolDeadLetterReplay.inspect(spoolDirectory: directory)
        if format == "json" {
            let topics = inspection.deadLetterTopics.sorted { $0.key < $1.key }
                .map { "{\"topic\":\(jsonString($0.key)),\"records\":\($0.value)}" }.joined(separator: ",")
            arguments.output.print(
                """
                {"segments":\(inspection.segments),"segmentBytes":\(inspection.segmentBytes),\
                "records":\(inspection.segmentRecords),"damaged":\(inspection.damaged),\
                "deadLetters":\(inspection.deadLetters),"deadLetterTopics":[\(topics)]}
                """)
        } else {
            var lines = [
                "segments: \(inspection.segments) (\(inspection.segmentBytes) bytes), "
                    + "records: \(inspection.segmentRecords)",
                "dead letters: \(inspection.deadLetters)",
            ]
            for (topic, count) in inspection.deadLetterTopics.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(topic.debugDescription): \(count)")
            }
            if inspection.damaged > 0 { lines.append("damaged stretches: \(inspection.damaged)") }
            arguments.output.print(lines.joined(separator: "\n"))
        }
        return inspection.deadLetters > 0 ? 3 : 0
    }

    private static func runReplay(_ arguments: ParsedArguments) async throws -> Int32 {
        let directory = try arguments.required("spool-dir")
        let timeout =
            try arguments.parsed("timeout", as: "a duration such as 60s or 5m", OptionValues.duration)
            ?? .seconds(60)
        var configuration = KafkaProducerConfiguration(bootstrapServers: try SharedOptions.brokers(arguments))
        configuration.clientID = "flowmeter-spool-replay"
        configuration.messageTimeout = timeout
        configuration.statisticsInterval = .zero
        let producer = try KafkaProducer(configuration: configuration)
        let output = arguments.output
        let summary: SpoolDeadLetterReplay.Summary
        do {
            summary = try await SpoolDeadLetterReplay.run(spoolDirectory: directory, producer: producer) {
                done, total in
                output.printError("replayed \(done) of \(total) dead letters")
            }
        } catch {
            _ = await producer.shutdown(timeout: .seconds(5))
            throw error
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        var text =
            "dead letters: \(summary.records) in \(summary.segments) segment(s); replayed \(summary.replayed), "
            + "kept again \(summary.keptAgain)"
        if summary.damaged > 0 { text += ", damaged stretches skipped \(summary.damaged)" }
        output.print(text)
        if let error = summary.firstError { output.printError("first error: \(error)") }
        return summary.keptAgain == 0 ? 0 : 1
    }

    private static func jsonString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
