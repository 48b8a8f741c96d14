import Collector
import Foundation
import Kafka
import TestSupport
import Testing

/// docs/reliability.md K1 and K7 with the disk spool, scaled to CI: every broker down under steady load. Requests keep
/// getting 202 (from the spool once the threshold passes); when the brokers are back the spool is replayed and
/// empties, and every acknowledged event is in the events topic.
@Suite struct SpoolOutageTests {
    /// A collector on `kafka` with a spool in `directory`.
    static func collector(
        _ kafka: KafkaFixture, spool directory: TemporaryDirectory, maxBytes: Int = 1 << 30,
        _ configure: (inout CollectorConfiguration) -> Void = { _ in }
    ) throws -> CollectorFixture {
        try CollectorFixture(kafka: kafka) { configuration in
            var spool = CollectorConfiguration.DiskSpool(directory: directory.file("spool"))
            spool.maxBytes = maxBytes
            configuration.spool = spool
            configuration.defaultRateLimit = .init(perSecond: 1_000_000, burst: 1_000_000)
            // The 503 backstop well past the spool threshold (1 s), so a loaded machine's slow sync is not a 503.
            configuration.responseDeadline = .seconds(5)
            configuration.requestDeadline = .seconds(10)
            configure(&configuration)
        }
    }

    @Test func k1EveryBrokerDownThirtySecondsAllAcknowledgedEventsArriveAndTheSpoolEmpties() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-k1")
        let fixture = try Self.collector(kafka, spool: directory)
        let load = SpoolLoad(name: "k1", port: fixture.port)
        #expect(await eventually { load.acknowledged.count >= 100 }, "the load is acknowledged before the outage")

        load.phase("threshold")
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        // The first batches wait for Kafka up to the threshold; then the spool answers.
        #expect(await eventually { fixture.collector.spooledRecords > 0 }, "the spool takes over")
        load.phase("outage")
        // Thirty seconds of outage in all (the scenario's length), and at least 50 answers in it however slow the
        // machine is: the phase ends on both.
        try await Task.sleep(for: .seconds(27))
        #expect(await eventually { load.statuses(in: "outage")[202, default: 0] > 50 })
        let spooledDuringOutage = fixture.collector.spooledRecords
        let ready = try await fixture.get("/readyz")
        load.phase("after")
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        #expect(await eventually { load.statuses(in: "after")[202, default: 0] >= 20 })
        await load.stop()

        let outage = load.statuses(in: "outage")
        print("K1: statuses \(load.statuses), outage \(outage), spooled \(spooledDuringOutage)")
        #expect(outage[202, default: 0] > 50, "the spool kept answering 202 during the outage: \(outage)")
        #expect(outage.keys.allSatisfy { $0 == 202 }, "only 202 during the outage: \(outage)")
        #expect(load.statuses(in: "threshold").keys.allSatisfy { $0 == 202 })
        #expect(load.failures == 0)
        #expect(spooledDuringOutage > 0)
        #expect(ready.status == 200, "ready while the spool takes the traffic: \(ready.bodyText)")
        #expect(ready.json["spooling"] as? Bool == true)

        let emptied = await eventually { fixture.collector.spooledRecords == 0 }
        #expect(emptied, "the spool empties once the brokers are back: \(fixture.collector.spooledRecords) left")
        let acknowledged = load.acknowledged
        let consumed = try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged)
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")
        print("K1: \(acknowledged.count) acknowledged, \(consumed.count) consumed, \(Set(consumed).count) distinct")
        let metrics = try await fixture.get("/metrics").bodyText
        #expect((SpoolChecks.sample("flowmeter_spool_replayed_records_total", in: metrics) ?? 0) > 0)
        // The store's counts are built from these records by the sink, which dedupes copies by batch id
        // (SinkTests, FleetInvariantTests): that every acknowledged event is in the log is what the spool owes.
        #expect(
            await eventually {
                fixture.collector.spooledRecords == 0 && SpoolChecks.segments(in: directory.file("spool")).isEmpty
            })
        await fixture.shutdown()
    }

    @Test func k7AnOutageLongerThanTheMessageTimeoutRequeuesEveryTimedOutDelivery() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-k7")
        let fixture = try Self.collector(kafka, spool: directory) { configuration in
            configuration.kafkaProperties = ["message.timeout.ms": "10000"]
        }
        let load = SpoolLoad(name: "k7", port: fixture.port)
        #expect(await eventually { load.acknowledged.count >= 100 }, "the load is acknowledged before the outage")
        load.phase("outage")
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        // An outage longer than message.timeout.ms (10 s): 25 s of scenario time, and until the first delivery
        // reports have timed out, however slow the machine.
        try await Task.sleep(for: .seconds(25))
        let timedOutReports = #"flowmeter_kafka_delivery_errors_total{error="_MSG_TIMED_OUT"}"#
        #expect(
            try await eventually {
                SpoolChecks.sample(timedOutReports, in: try await fixture.get("/metrics").bodyText) ?? 0 > 0
            })
        load.phase("after")
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        #expect(await eventually { load.statuses(in: "after")[202, default: 0] >= 20 })
        await load.stop()
        print("K7: statuses \(load.statuses)")
        #expect(load.statuses(in: "outage").keys.allSatisfy { $0 == 202 }, "\(load.statuses(in: "outage"))")

        #expect(await eventually { fixture.collector.spooledRecords == 0 })
        let acknowledged = load.acknowledged
        let consumed = try await SpoolChecks.consumedIDs(kafka, expecting: acknowledged)
        let missing = acknowledged.subtracting(consumed)
        #expect(missing.isEmpty, "acknowledged ⊆ consumed: \(missing.count) of \(acknowledged.count) missing")

        // A delivery error is counted when its report arrives, its requeue once the whole batch has reported and
        // been settled against the spool: under load the second can trail the first by a moment.
        var timedOut: Double?
        var requeued: Double?
        _ = try await eventually(every: .milliseconds(100)) {
            let metrics = try await fixture.get("/metrics").bodyText
            timedOut = SpoolChecks.sample(timedOutReports, in: metrics)
            requeued = SpoolChecks.sample(
                #"flowmeter_spool_requeued_messages_total{outcome="timed_out_requeued"}"#, in: metrics)
            return requeued == timedOut
        }
        print("K7: \(timedOut ?? 0) timed-out reports, \(requeued ?? 0) requeued, \(acknowledged.count) acknowledged")
        #expect((timedOut ?? 0) > 0, "the outage outlasted message.timeout.ms")
        #expect(requeued == timedOut, "every timed-out delivery was requeued and counted")
        await fixture.shutdown()
    }
}
