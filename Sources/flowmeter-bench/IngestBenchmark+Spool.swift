import Foundation
import IngestBenchmarks
import Kafka

extension IngestBenchmark {
    /// How the spool drained once the brokers were back.
    struct Replay {
        var records: Double
        var seconds: Double
        var cpuSeconds: Double

        var recordsPerSecond: Double { seconds > 0 ? records / seconds : 0 }
    }

    /// Every broker down: the same load, answered 202 from the disk spool (after a warm-up that lets the first
    /// batches pass the spool threshold); then the brokers come back and the spool is timed until it is empty
    /// (at most 300 s).
    static func measureSpooling(
        process: MeasuredProcess, port: UInt16, cluster: KafkaMockCluster, requests: [LoadGenerator.Request],
        connections: Int, options: IngestOptions
    ) throws -> (IngestMeasurement, Replay) {
        let generator = LoadGenerator(host: "127.0.0.1", port: port, requests: requests)
        try cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        _ = generator.run(connections: 8, seconds: 3, maxRequests: 2_000)
        let before = process.counters()
        let result = generator.run(connections: connections, seconds: options.seconds, maxRequests: options.maxRequests)
        let after = process.counters()
        let row = IngestMeasurement(
            target: "flowmeter",
            cell: IngestCell(ack: "delivered", connections: connections, encoding: "plain", batches: "spool"),
            round: 1, requests: result.requests, events: result.events, elapsed: result.elapsed,
            cpuSeconds: after.cpuSeconds - before.cpuSeconds, p50Millis: result.percentile(0.5),
            p99Millis: result.percentile(0.99), peakRSSMiB: after.peakRSSMiB,
            contextSwitches: after.contextSwitches - before.contextSwitches, threads: after.threads,
            statusCounts: result.statusCounts, failures: result.failures)
        let spooled = spoolRecords(port: port) ?? 0
        if let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics") {
            let lines = metrics.split(separator: "\n").filter {
                $0.hasPrefix("flowmeter_spool_") || $0.hasPrefix("flowmeter_kafka_delivered_total")
                    || $0.hasPrefix("flowmeter_kafka_up")
            }
            print("flowmeter spool after the outage load:")
            lines.forEach { print("    \($0)") }
        }
        let replayCPU = process.counters().cpuSeconds
        let started = Date()
        try cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        while Date().timeIntervalSince(started) < 300, (spoolRecords(port: port) ?? 0) > 0 {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let replay = Replay(
            records: spooled, seconds: Date().timeIntervalSince(started),
            cpuSeconds: process.counters().cpuSeconds - replayCPU)
        return (row, replay)
    }

    static func spoolRecords(port: UInt16) -> Double? {
        guard let metrics = HTTPConnection(host: "127.0.0.1", port: port)?.get("/metrics") else { return nil }
        for line in metrics.split(separator: "\n") where line.hasPrefix("flowmeter_spool_records ") {
            return Double(line.dropFirst("flowmeter_spool_records ".count))
        }
        return nil
    }

    static func describe(_ replay: Replay) -> String {
        String(
            format: "flowmeter    replay of the spool once the brokers are back: %.0f records in %.1f s, "
                + "%.0f records/s, cpu %.2f s",
            replay.records, replay.seconds, replay.recordsPerSecond, replay.cpuSeconds)
    }
}
