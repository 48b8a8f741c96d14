import Collector
import Foundation
import Kafka
import TestSupport
import Testing

/// docs/reliability.md K7, scaled down: a broker outage longer than `message.timeout.ms`. Batches posted during it get
/// 503 with Retry-After (never 202), each timed-out delivery report is counted, and after recovery what got a 202 is in
/// the topic.
@Suite(.serialized) struct KafkaTimeoutTests {
    @Test func anOutageLongerThanTheMessageTimeoutGives503AndLosesNothingAcknowledged() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka) { configuration in
            configuration.kafkaProperties = ["message.timeout.ms": "2000"]
            // Longer than the message timeout, so the delivery reports time out before the collector stops waiting.
            configuration.responseDeadline = .seconds(4)
        }
        var acknowledged: Set<String> = []
        // A cold producer's first metadata round trip can outlast the deadline on a loaded machine: a 503 then is the
        // contract working, so the client's retry is what the test waits for.
        let warm = try await fixture.postUntilAccepted(prefix: "k7-before")
        #expect(warm.refusals.allSatisfy { $0 == 503 })
        acknowledged.formUnion(warm.acknowledged)

        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let outageStarted = ContinuousClock.now
        var downEvents = 0
        var downStatuses: [Int] = []
        while ContinuousClock.now - outageStarted < .seconds(5) {
            let response = try await fixture.post(Batches.good(events: 2, id: "k7-down-\(downStatuses.count)"))
            downStatuses.append(response.status)
            downEvents += 2
            #expect(response.status == 503)
            #expect(response.header("Retry-After") != nil)
        }
        #expect(!downStatuses.isEmpty)
        print("K7: statuses during the outage \(downStatuses)")
        // Every event of a batch answered 503 counts once as unavailable, those of the 202 as accepted.
        let unavailable = #"flowmeter_events_total{kind="unknownType",outcome="unavailable"}"#
        #expect(try await fixture.metric(unavailable) == Double(downEvents + 2 * warm.refusals.count))
        #expect(try await fixture.metric(#"flowmeter_events_total{kind="unknownType",outcome="accepted"}"#) == 2)

        // Delivery reports come from librdkafka's timeout scan, one per batch record (a batch is one record).
        let downBatches = Double(downStatuses.count)
        var errors: [String: Double] = [:]
        _ = try await eventually(every: .milliseconds(100)) {
            errors = try await deliveryErrors(fixture)
            return errors.values.reduce(0, +) >= downBatches
        }
        print("K7: delivery errors \(errors)")
        #expect(errors[#"error="_MSG_TIMED_OUT""#, default: 0] >= downBatches, "timeouts counted: \(errors)")

        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let recovery = try await fixture.postUntilAccepted(prefix: "k7-after")
        #expect(recovery.refusals.allSatisfy { $0 == 503 }, "\(recovery.refusals)")
        #expect(!recovery.acknowledged.isEmpty, "batches get 202 again once the brokers are back")
        acknowledged.formUnion(recovery.acknowledged)
        // Later batches are taken too. With a 2 s message timeout, a loaded machine can still time one out: its 503 is
        // the contract working, and the client's retry gets the 202 (a hang or any other answer fails the test).
        for index in 0..<3 {
            let later = try await fixture.postUntilAccepted(prefix: "k7-later-\(index)")
            #expect(later.refusals.allSatisfy { $0 == 503 }, "\(later.refusals)")
            #expect(!later.acknowledged.isEmpty)
            acknowledged.formUnion(later.acknowledged)
        }

        let expected = acknowledged
        let messages = try await kafka.consume(topic: KafkaFixture.batchesTopic) { messages in
            let ids = Set(
                messages.flatMap(SpoolChecks.ids))
            return expected.isSubset(of: ids)
        }
        let ids = messages.flatMap(SpoolChecks.ids)
        #expect(acknowledged.isSubset(of: Set(ids)), "acknowledged ⊆ consumed")
        print("K7: \(acknowledged.count) acknowledged, \(ids.count) consumed")
        await fixture.shutdown()
    }

    /// The `flowmeter_kafka_delivery_errors_total` samples by label set, such as `error="_MSG_TIMED_OUT"`.
    private func deliveryErrors(_ fixture: CollectorFixture) async throws -> [String: Double] {
        let prefix = "flowmeter_kafka_delivery_errors_total{"
        var samples: [String: Double] = [:]
        for line in try await fixture.get("/metrics").bodyText.split(separator: "\n") where line.hasPrefix(prefix) {
            guard let close = line.lastIndex(of: "}") else { continue }
            let labels = String(line[line.index(line.startIndex, offsetBy: prefix.count)..<close])
            samples[labels] = Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces))
        }
        return samples
    }
}
