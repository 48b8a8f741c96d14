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

        // One record for the batch, with the contract's headers and key (app id and batch id).
        let messages = try await kafka.consumeAll(topic: KafkaFixture.batchesTopic, expecting: 1)
        #expect(messages.count == 1)
        let message = try #require(messages.first)
        #expect(message.header(named: "content-type") == Array("application/json".utf8))
        #expect(message.header(named: "schema") == Array("flowmeter.batches.v1".utf8))
        #expect(message.header(named: "app-id") == Array(CollectorFixture.shopApp.utf8))
        #expect(message.header(named: "events") == Array("2".utf8))
        #expect(!String(decoding: message.value, as: UTF8.self).contains(rawInstall))
        #expect(String(decoding: message.key ?? [], as: UTF8.self) == CollectorFixture.shopApp + "/batch-e2e")
        let record = try JSONDecoder().decode(BatchRecordProbe.self, from: Data(message.value))
        #expect(record.batchID == "batch-e2e" && record.appID == CollectorFixture.shopApp)
        #expect(record.collector == "test-collector" && record.installHash?.count == 32)
        #expect(record.part == 0 && record.parts == 1)
        #expect(record.events.map(\.id) == ["ev-1", "batch-e2e/1"])
        #expect(record.events.map(\.kind) == ["unknownType", "droppedElement"])
        #expect(!fixture.logs.joined().contains(rawInstall))
        #expect(!fixture.logs.joined().contains(CollectorFixture.shopKey))
        await fixture.shutdown()
    }

    @Test func aRepeatedBatchIDIsAnsweredWithoutPublishingTwiceByTheSameCollector() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka)
        let body = Batches.good(events: 3, id: "retry-me")
        let first = try await fixture.post(body)
        let second = try await fixture.post(body)
        #expect(first.status == 202)
        #expect(second.status == 202)
        #expect(second.body == first.body)
        let messages = try await kafka.consumeAll(
            topic: KafkaFixture.batchesTopic, expecting: 2, timeout: .seconds(8), settle: .zero)
        #expect(messages.count == 1)
        #expect(try await fixture.metric(#"flowmeter_batches_total{outcome="duplicate"}"#) == 1)
        await fixture.shutdown()
    }

    @Test func enqueueAckAnswersAndStillPublishes() async throws {
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka) { $0.ackMode = .enqueue }
        #expect(try await fixture.post(Batches.good(events: 4)).status == 202)
        let messages = try await kafka.consumeAll(topic: KafkaFixture.batchesTopic, expecting: 1)
        #expect(messages.count == 1)
        #expect(messages.flatMap(SpoolChecks.ids).count == 4)
        await fixture.shutdown()
    }

    @Test func aBatchWithNoAcceptedEventsStillWritesItsRecord() async throws {
        // Its decodes and its dropped event are traffic the store counts: the record carries them.
        let kafka = try KafkaFixture()
        let fixture = try CollectorFixture(kafka: kafka)
        let response = try await fixture.post(Batches.batch(events: [#"{"kind":1}"#]))
        #expect(response.status == 202)
        #expect(response.json["dropped"] as? Int == 1)
        let messages = try await kafka.consumeAll(topic: KafkaFixture.batchesTopic, expecting: 1)
        let record = try JSONDecoder().decode(BatchRecordProbe.self, from: Data(try #require(messages.first).value))
        #expect(record.events.isEmpty && record.dropped == 1)
        await fixture.shutdown()
    }

    @Test func aBatchLargerThanOneRecordIsSplitTheSameWayThroughEveryCollector() async throws {
        let kafka = try KafkaFixture()
        let first = try CollectorFixture(kafka: kafka) {
            $0.maxRecordBytes = 65_536
            $0.collectorID = "collector-a"
        }
        let second = try CollectorFixture(kafka: kafka) {
            $0.maxRecordBytes = 65_536
            $0.collectorID = "a-collector-with-a-much-longer-name"
        }
        let body = Batches.good(events: 400, id: "big-batch")
        #expect(try await first.post(body).status == 202)
        #expect(try await second.post(body).status == 202)
        let messages = try await kafka.consume(topic: KafkaFixture.batchesTopic) {
            $0.flatMap(SpoolChecks.ids).count >= 800
        }
        let records = try messages.map { try JSONDecoder().decode(BatchRecordProbe.self, from: Data($0.value)) }
        #expect(messages.allSatisfy { $0.value.count <= 65_536 })
        let parts = records.first?.parts ?? 0
        #expect(parts > 1)
        // Every part of one copy holds the same events as that part of the other.
        for collector in ["collector-a", "a-collector-with-a-much-longer-name"] {
            let copy = records.filter { $0.collector == collector }.sorted { $0.part < $1.part }
            #expect(copy.map(\.part) == Array(0..<parts))
        }
        let byPart = Dictionary(grouping: records, by: \.part)
        #expect(byPart.values.allSatisfy { Set($0.map { $0.events.map(\.id) }).count == 1 })
        await first.shutdown()
        await second.shutdown()
    }
}

/// The fields of a batch record the tests look at.
struct BatchRecordProbe: Decodable {
    struct Event: Decodable {
        var id: String
        var kind: String
    }

    var batchID: String
    var appID: String
    var collector: String
    var installHash: String?
    var part: Int
    var parts: Int
    var dropped: Int
    var events: [Event]
}
