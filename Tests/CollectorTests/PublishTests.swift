import Collector
import Foundation
import Kafka
import TestSupport
import Testing

/// End to end through the mock cluster: what a 202 means in `flowmeter.events.v1`.
@Suite struct PublishTests {
    @Test func acceptedEventsLandInTheTopicWithHashedInstallIDsHeadersAndKeys() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka)
        let rawInstall = "RAW-INSTALL-7F3A9C1E-6B7D-4E8F"
        let body = Batches.batch(
            id: "batch-e2e", installID: rawInstall,
            events: [
                Batches.event(widgetType: "hologram_projector", id: "ev-1"),
                Batches.event(kind: "droppedElement", widgetType: nil),
            ])
        let response = try await fixture.post(body)
        #expect(response.status == 202)
        #expect(response.json["accepted"] as? Int == 2)

        let messages = try await kafka.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 2)
        #expect(messages.count == 2)
        for message in messages {
            #expect(message.header(named: "content-type") == Array("application/json".utf8))
            #expect(message.header(named: "schema") == Array("flowmeter.events.v1".utf8))
            #expect(!String(decoding: message.value, as: UTF8.self).contains(rawInstall))
            #expect(!String(decoding: message.key ?? [], as: UTF8.self).contains(rawInstall))
        }
        let records = try messages.map { try JSONDecoder().decode(EventRecordProbe.self, from: Data($0.value)) }
        #expect(Set(records.map(\.id)) == ["ev-1", "batch-e2e/1"])
        #expect(Set(records.map(\.kind)) == ["unknownType", "droppedElement"])
        #expect(records.allSatisfy { $0.appID == CollectorFixture.shopApp && $0.collector == "test-collector" })
        #expect(records.allSatisfy { $0.installHash?.count == 32 })
        #expect(Set(records.compactMap(\.installHash)).count == 1)
        let keys = Set(messages.compactMap { $0.key.map { String(decoding: $0, as: UTF8.self) } })
        #expect(
            keys == [
                #"["com.example.shop","unknownType","hologram_projector"]"#,
                #"["com.example.shop","droppedElement",null]"#,
            ])
        #expect(!fixture.logs.joined().contains(rawInstall))
        #expect(!fixture.logs.joined().contains(CollectorFixture.shopKey))
        await fixture.shutdown()
    }

    @Test func aRepeatedBatchIDIsAnsweredWithoutPublishingTwice() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka)
        let body = Batches.good(events: 3, id: "retry-me")
        let first = try await fixture.post(body)
        let second = try await fixture.post(body)
        #expect(first.status == 202)
        #expect(second.status == 202)
        #expect(second.body == first.body)
        let messages = try await kafka.consumeAll(
            topic: KafkaFixture.eventsTopic, expecting: 4, timeout: .seconds(8), settle: .zero)
        #expect(messages.count == 3)
        #expect(try await fixture.metric(#"flowmeter_batches_total{outcome="duplicate"}"#) == 1)
        await fixture.shutdown()
    }

    @Test func enqueueAckAnswersAndStillPublishes() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka) { $0.ackMode = .enqueue }
        #expect(try await fixture.post(Batches.good(events: 4)).status == 202)
        let messages = try await kafka.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 4)
        #expect(messages.count == 4)
        await fixture.shutdown()
    }

    @Test func aBatchWithNoAcceptedEventsIsAnsweredWithoutKafka() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka)
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let response = try await fixture.post(Batches.batch(events: [#"{"kind":1}"#]))
        #expect(response.status == 202)
        #expect(response.json["dropped"] as? Int == 1)
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        await fixture.shutdown()
    }
}

/// The fields of an events-topic value the tests look at.
struct EventRecordProbe: Decodable {
    var id: String
    var kind: String
    var appID: String
    var installHash: String?
    var collector: String
}

/// `--kafka-linger-mode`: adaptive tells the producer to send once every connection waits for its 202; fixed never.
@Suite struct LingerModeTests {
    @Test(arguments: [CollectorConfiguration.LingerMode.adaptive, .fixed])
    func aLoneClientsBatchCutsTheLingerShortOnlyWhenAdaptive(mode: CollectorConfiguration.LingerMode) async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka) { $0.kafkaLingerMode = mode }
        let response = try await fixture.post(Batches.good(events: 3))
        #expect(response.status == 202)
        let cuts = try await fixture.metric("flowmeter_kafka_linger_cut_short_total")
        #expect(cuts == (mode == .adaptive ? 1 : 0))
        await fixture.shutdown()
    }
}
