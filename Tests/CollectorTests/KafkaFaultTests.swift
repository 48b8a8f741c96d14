import Collector
import Foundation
import Kafka
import Synchronization
import TestSupport
import Testing

/// docs/reliability.md K1/K5 in small: a 202 only for what Kafka has, 503 within the deadline otherwise.
@Suite struct KafkaFaultTests {
    @Test func brokersDownGive503WithinTheDeadlineAndBackUpGive202Again() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka) { $0.responseDeadline = .seconds(1) }
        var acknowledged: Set<String> = []
        let before = Batches.good(events: 2, id: "before")
        // The producer's first metadata round trip can outlast the 1 s deadline on a loaded machine; a 503 then is
        // the contract working, so the same batch is retried (a few times, bounded) until Kafka is warm.
        var warm = try await fixture.post(before).status
        _ = try await eventually(every: .milliseconds(100)) {
            if warm == 503 { warm = try await fixture.post(before).status }
            return warm != 503
        }
        #expect(warm == 202)
        acknowledged.formUnion(["before-0", "before-1"])

        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        for attempt in 0..<3 {
            let response = try await fixture.post(Batches.good(events: 2, id: "down-\(attempt)"))
            #expect(response.status == 503)
            #expect(response.json["error"] as? String == "unavailable")
            #expect(response.header("Retry-After") != nil)
        }
        #expect(try await fixture.get("/readyz").status == 503)

        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let recovery = try await fixture.postUntilAccepted(prefix: "after")
        #expect(recovery.refusals.allSatisfy { $0 == 503 }, "\(recovery.refusals)")
        #expect(!recovery.acknowledged.isEmpty, "202 again once the brokers are back")
        acknowledged.formUnion(recovery.acknowledged)
        // The retry of a batch answered 503 while Kafka was away: once Kafka took it, 202 without publishing again.
        let retry = try await fixture.post(Batches.good(events: 2, id: "down-0"))
        #expect(retry.status == 202 || retry.status == 503)
        if retry.status == 202 { acknowledged.formUnion(["down-0-0", "down-0-1"]) }

        let expected = acknowledged
        let messages = try await kafka.consume(topic: KafkaFixture.batchesTopic) { messages in
            let ids = Set(
                messages.flatMap(SpoolChecks.ids))
            return expected.isSubset(of: ids)
        }
        let ids = messages.flatMap(SpoolChecks.ids)
        #expect(acknowledged.isSubset(of: Set(ids)), "acknowledged ⊆ consumed")
        let duplicates = ids.count - Set(ids).count
        print("KafkaFaultTests: \(acknowledged.count) acknowledged, \(ids.count) consumed, \(duplicates) duplicates")
        await fixture.shutdown()
    }

    @Test func aFullQueueGives503AtOnce() async throws {
        let kafka = try KafkaFixture()
        // A batch is one record, or a few when it is larger than the record limit: with a 1 KiB limit the batch of
        // 20 events is split into more parts than the queue's five messages hold.
        let fixture = try CollectorFixture(kafka: kafka) {
            $0.kafkaProperties = ["queue.buffering.max.messages": "5"]
            $0.maxRecordBytes = 1_024
        }
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let response = try await fixture.post(Batches.good(events: 20))
        #expect(response.status == 503)
        #expect(try await fixture.metric(#"flowmeter_rejections_total{reason="unavailable_queue_full"}"#) == 1)
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        await fixture.shutdown()
    }
}
