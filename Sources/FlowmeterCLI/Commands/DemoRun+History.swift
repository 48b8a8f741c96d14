import Collector
import FlowmeterModels
import FlowmeterRuntime
import Foundation
import Kafka
import Lifecycle
import RollupStore

extension DemoRun {
    /// Writes weeks of the fleet's past to the embedded cluster's batches topic (``SeededHistory``), as the collector
    /// would have written them then, and waits (bounded) until the sink has built them into the store.
    func seedHistory(
        _ scenario: TrafficScenario, configuration: CollectorConfiguration, bootstrapServers: [String],
        store: any RollupStore
    ) async {
        let history = SeededHistory(
            scenario: scenario, days: historyDays, salt: configuration.salt ?? Array("demo".utf8))
        let topic = configuration.topics.batches
        Terminal.heading("seeding \(historyDays) days of history: batch records written to \(topic)")
        let clock = ContinuousClock()
        let started = clock.now
        let batches = history.batches()
        let records = history.records(
            of: batches, topic: topic, collector: "demo-history", maxRecordBytes: configuration.maxRecordBytes)
        print(
            "    \(CellFormat.count(Int64(batches.count))) batch records received "
                + "\(Timestamp(secondsSinceEpoch: history.start).rfc3339String) to "
                + "\(Timestamp(secondsSinceEpoch: history.end).rfc3339String)")
        print(
            "    (each one install's upload of \(history.batchesPerRecord) batches' decodes and diagnostics, SDK-aggregated):"
        )
        print(
            "    the simulation's pace on a daily rhythm, new versions adopted over the weeks, background diagnostics")
        let failure = await produce(records, bootstrapServers: bootstrapServers)
        if let failure {
            print("    " + Terminal.styled("the history was not written: \(failure)", .yellow) + "\n")
            return
        }
        let stored = await waitForBatches(
            store: store, from: history.start, to: history.end, count: Int64(batches.count))
        let elapsed = (clock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        if stored >= Int64(batches.count) {
            print(
                "    all in the store, built by the sink like any other records, after "
                    + String(format: "%.1f", seconds) + " s\n")
        } else {
            print(
                "    "
                    + Terminal.styled("only \(stored) of \(batches.count) history batches reached the store", .yellow)
                    + "\n")
        }
    }

    /// Produces `records` to the cluster; nil when every one was persisted, else what went wrong.
    private func produce(_ records: [KafkaProducerMessage], bootstrapServers: [String]) async -> String? {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientID = "flowmeter-demo-history"
        configuration.messageTimeout = .seconds(30)
        configuration.statisticsInterval = .zero
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(configuration: configuration)
        } catch {
            return String(describing: error)
        }
        var failure: String?
        for chunk in stride(from: 0, to: records.count, by: 2_000) {
            let part = records[chunk..<min(chunk + 2_000, records.count)]
            let outcome: String? = await withCheckedContinuation { continuation in
                do {
                    try producer.enqueueBatch(capacity: part.count) { outcome in
                        continuation.resume(
                            returning: outcome.isFullyPersisted && outcome.enqueued == part.count
                                ? nil : "\(outcome.failures.count) of \(part.count) records failed")
                    } _: { writer in
                        for record in part {
                            try writer.append(
                                topic: record.topic, key: record.key ?? [], value: record.value,
                                headers: record.headers)
                        }
                    }
                } catch {
                    // The completion runs in every case and has resumed already.
                }
            }
            if let outcome {
                failure = outcome
                break
            }
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        return failure
    }

    /// Waits (at most 60 s) until the store holds `count` batches received in [`from`, `to`]; returns how many.
    private func waitForBatches(store: any RollupStore, from: Int64, to: Int64, count: Int64) async -> Int64 {
        let deadline = ContinuousClock.now + .seconds(60)
        var stored: Int64 = 0
        while true {
            stored = await onThread(named: "demo-store-read") { () -> Int64 in
                let rollups = try? store.versionRollups(
                    from: Timestamp(secondsSinceEpoch: from - 3600), to: Timestamp(secondsSinceEpoch: to + 3600),
                    appID: nil)
                return rollups?.reduce(0) { $0 + $1.batches } ?? 0
            }
            if stored >= count || ContinuousClock.now >= deadline { return stored }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }
}
