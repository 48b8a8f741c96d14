import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import TestSupport
import Testing

/// Capability manifests through the pipeline (docs/api.md#capability-manifests): `POST /v1/manifests` on a real `flowmeter serve`
/// validates, records in its store and publishes to `flowmeter.manifests.v1`; any other sink reading that topic
/// gets the same manifests into its own store; a bad message on the topic is dead-lettered, never stored.
@Suite(.serialized) struct ManifestPipelineTests {
    static let manifest = #"""
        {"appID": "com.example.shop", "appVersion": "5.3.0", "platform": "ios", "build": "5300",
         "types": {"image_text_card": {"required": ["title"], "optional": ["imageURL", "kicker"]},
                   "accordion": {"required": ["children"], "optional": []}},
         "arrangements": ["vertical", "horizontal", "grid"]}
        """#

    static func json(_ response: HTTPTestResponse) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }

    @Test func postManifestsRecordsPublishesReplacesAndRefusesBadUploads() async throws {
        let kafka = try KafkaFixture()
        let storeDirectory = try TemporaryDirectory(prefix: "flowmeter-store")
        defer { storeDirectory.remove() }
        let path = storeDirectory.file("flowmeter.sqlite")
        let serve = try await ServeProcess(["--kafka", kafka.bootstrapServers.joined(separator: ","), "--store", path])
        let body = Array(Self.manifest.utf8)
        let created = try await serve.post(body, key: ServeProcess.adminKey, path: "/v1/manifests")
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let answer = try Self.json(created)
        #expect(answer["appVersion"] as? String == "5.3.0")
        #expect(answer["types"] as? Int == 2)
        // The same build again, now with a third type: it replaces the first upload.
        let replacement = Self.manifest.replacingOccurrences(
            of: #""accordion""#, with: #""hologram_projector": {"required": ["depth"]}, "accordion""#)
        let replaced = try await serve.post(Array(replacement.utf8), key: ServeProcess.adminKey, path: "/v1/manifests")
        #expect(replaced.status == 201)

        let missing = try await serve.post(
            Array(#"{"appID": "a", "appVersion": "1", "platform": "ios"}"#.utf8), key: ServeProcess.adminKey,
            path: "/v1/manifests")
        #expect(missing.status == 400)
        #expect(try Self.json(missing)["error"] as? String == "invalid_json")
        #expect(try Self.json(missing)["path"] as? String == "types")
        let hostile = try await serve.post(
            Array(Self.manifest.replacingOccurrences(of: "\"kicker\"", with: "\"kick\\u001b[2Jer\"").utf8),
            key: ServeProcess.adminKey, path: "/v1/manifests")
        #expect(hostile.status == 400)
        #expect(try Self.json(hostile)["path"] as? String == "types.image_text_card.optional.Index 1")
        let types = (0..<2_001).map { #""t\#($0)": {}"# }.joined(separator: ",")
        let huge = try await serve.post(
            Array(#"{"appID": "a", "appVersion": "1", "platform": "ios", "types": {\#(types)}}"#.utf8),
            key: ServeProcess.adminKey, path: "/v1/manifests")
        #expect(huge.status == 413)
        #expect(try Self.json(huge)["error"] as? String == "too_large")
        #expect((try Self.json(huge)["message"] as? String)?.contains("the limit is 2000") == true)
        #expect(try await serve.post(body, key: nil, path: "/v1/manifests").status == 401)
        #expect(try await serve.post(body, key: ServeProcess.ingestKey, path: "/v1/manifests").status == 403)
        #expect(try await serve.terminate() == 0)

        let stored = try openRollupStore(url: path).manifests(appID: nil)
        #expect(stored.count == 1)
        #expect(stored.first?.types.keys.sorted() == ["accordion", "hologram_projector", "image_text_card"])
        #expect(stored.first?.uploadedAt != nil)
        let published = try await kafka.consumeAll(topic: KafkaFixture.manifestsTopic, expecting: 2)
        #expect(published.count == 2)
        #expect(published.allSatisfy { $0.key == Array("com.example.shop".utf8) })
        #expect(published.first?.header(named: "schema") == Array(KafkaFixture.manifestsTopic.utf8))

        // Another sink, with a store of its own, reads the topic: it ends with the replacement too.
        let otherDirectory = try TemporaryDirectory(prefix: "flowmeter-other-store")
        defer { otherDirectory.remove() }
        let other = try openRollupStore(url: otherDirectory.file("other.sqlite"))
        var configuration = RollupSinkConfiguration(bootstrapServers: kafka.bootstrapServers)
        configuration.groupID = "other-\(UUID().uuidString)"
        configuration.pollTimeout = .milliseconds(200)
        let sink = try RollupSink(configuration: configuration, store: other)
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.manifests >= 2 })
        #expect(try other.manifests(appID: nil) == stored)
    }

    @Test func theSinkStoresManifestsFromTheTopicAndDeadLettersBadOnes() async throws {
        let fixture = try SinkFixture()
        var manifest = try CapabilityManifest(jsonBytes: Array(Self.manifest.utf8))
        manifest.uploadedAt = Timestamp(secondsSinceEpoch: 1_800_000_000)
        let producer = try fixture.kafka.makeProducer()
        let bad = [
            Array(#"{"appID": "a"}"#.utf8), Array("not json".utf8),
            Array(Self.manifest.replacingOccurrences(of: "\"ios\"", with: "\"i\\u0000os\"").utf8),
        ]
        for value in [manifest.jsonBytes()] + bad {
            _ = try await producer.send(
                KafkaProducerMessage(topic: KafkaFixture.manifestsTopic, key: Array("a".utf8), value: value))
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        let sink = try fixture.makeSink(group: "manifests-\(UUID().uuidString)")
        defer { sink.stop() }
        #expect(try await drive(sink) { $0.manifests + $0.badMessages >= 4 })
        #expect(sink.counters.manifests == 1)
        #expect(sink.counters.badMessages == 3)
        #expect(try fixture.deadLetters().count == 3)
        #expect(try fixture.store.manifests(appID: nil) == [manifest])
    }
}
