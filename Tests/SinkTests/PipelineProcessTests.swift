import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import TestSupport
import Testing

/// The real `flowmeter` executable end to end: serve → Kafka → sink → SQLite, deploy markers, and watch.
@Suite struct PipelineProcessTests {
    @Test func serveWithAStoreBuildsItsRollupsFromTheLogAndAReplayDoesNotDoubleCount() async throws {
        let kafka = try KafkaFixture()
        let storeDirectory = try TemporaryDirectory(prefix: "flowmeter-store")
        defer { storeDirectory.remove() }
        let path = storeDirectory.file("flowmeter.sqlite")
        let serve = try await ServeProcess([
            "--kafka", kafka.bootstrapServers.joined(separator: ","), "--store", path,
        ])
        let events = try await serve.postTraffic(batches: 30, installs: 12)
        #expect(try await serve.terminate() == 0)

        let store = try openRollupStore(url: path)
        let totals = try SinkFixture.totals(of: store)
        #expect(totals.events == events)
        #expect(totals.batches == 30)
        #expect(abs(totals.installs - 12) <= 1)

        // One record per batch, with the contract's headers and key; a new group replaying the topic into the same
        // store starts from the store's offsets and adds nothing.
        // Read until all 30 are in, then a moment more to see any record past them.
        let records = try await kafka.consume(topic: KafkaFixture.batchesTopic, settle: .seconds(1)) { $0.count >= 30 }
        #expect(records.count == 30)
        for record in records {
            #expect(record.header(named: "content-type") == Array("application/json".utf8))
            #expect(record.header(named: "schema") == Array(KafkaFixture.batchesTopic.utf8))
            #expect(String(decoding: record.key ?? [], as: UTF8.self).hasPrefix("com.example.shop/"))
        }
        let freshness = FreshnessAssessment(try store.freshness(), now: Timestamp(Date()))
        #expect(freshness.collectors.map(\.name) == [KafkaFixture.batchesTopic])
        let partitions = try (0..<3).filter {
            (try store.position(topic: KafkaFixture.batchesTopic, partition: $0).nextOffset ?? 0) > 0
        }.count
        var configuration = RollupSinkConfiguration(bootstrapServers: kafka.bootstrapServers)
        configuration.groupID = "replay-\(UUID().uuidString)"
        configuration.pollTimeout = .milliseconds(200)
        let replay = try RollupSink(configuration: configuration, store: store)
        defer { replay.stop() }
        #expect(try await drive(replay) { $0.seeks >= partitions })
        #expect(replay.counters.applied == 0)
        #expect(try SinkFixture.totals(of: store).events == events)
    }

    @Test func noneModeWithAStoreBuildsRollupsWithTheInProcessSink() async throws {
        let storeDirectory = try TemporaryDirectory(prefix: "flowmeter-store")
        defer { storeDirectory.remove() }
        let path = storeDirectory.file("flowmeter.sqlite")
        let serve = try await ServeProcess(["--kafka", "none", "--store", path])
        let events = try await serve.postTraffic(batches: 12, installs: 5)
        #expect(try await serve.terminate() == 0)
        let totals = try SinkFixture.totals(of: try openRollupStore(url: path))
        #expect(totals.events == events)
        #expect(totals.batches == 12)
        #expect(abs(totals.installs - 5) <= 1)
    }

    @Test func postDeploysRecordsInTheStoreAndTheTopicAndRefusesBadRequests() async throws {
        let kafka = try KafkaFixture()
        let storeDirectory = try TemporaryDirectory(prefix: "flowmeter-store")
        defer { storeDirectory.remove() }
        let path = storeDirectory.file("flowmeter.sqlite")
        let serve = try await ServeProcess(["--kafka", kafka.bootstrapServers.joined(separator: ","), "--store", path])
        let body = Array(
            #"{"service": "page-api", "version": "2026.11.30-2", "environment": "production", "startedAt": "2026-11-30T08:40:00Z", "finishedAt": "2026-11-30T08:44:10Z", "commit": "9f2c1ab", "url": "https://ci.example.com/builds/1234"}"#
                .utf8)
        let created = try await serve.post(body, key: ServeProcess.adminKey, path: "/v1/deploys")
        #expect(created.status == 201)
        let json = try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any]
        let id = try #require(json?["id"] as? String)

        let missing = try await serve.post(
            Array(#"{"service": "page-api", "version": "1"}"#.utf8), key: ServeProcess.adminKey, path: "/v1/deploys")
        #expect(missing.status == 400)
        let problem = try JSONSerialization.jsonObject(with: Data(missing.body)) as? [String: Any]
        #expect(problem?["error"] as? String == "invalid_json")
        #expect(problem?["path"] as? String == "finishedAt")
        #expect(try await serve.post(body, key: nil, path: "/v1/deploys").status == 401)
        #expect(try await serve.post(body, key: "not-a-key", path: "/v1/deploys").status == 401)
        #expect(try await serve.post(body, key: ServeProcess.ingestKey, path: "/v1/deploys").status == 403)
        #expect(try await serve.terminate() == 0)

        let stored = try openRollupStore(url: path).deploys(
            from: Timestamp(rfc3339: "2026-11-30T00:00:00Z")!, to: Timestamp(rfc3339: "2026-12-01T00:00:00Z")!)
        #expect(stored.map(\.id) == [id])
        #expect(stored.first?.commit == "9f2c1ab")
        let published = try await kafka.consumeAll(topic: KafkaFixture.deploysTopic, expecting: 1)
        #expect(published.count == 1)
        #expect(published.first?.key == Array("page-api".utf8))
        #expect(published.first?.header(named: "schema") == Array(KafkaFixture.deploysTopic.utf8))
        #expect(try published.first.map { try DeployMarker(jsonBytes: $0.value).id } == id)
    }

    @Test func deploysAddRecordsInTheStoreAndKafkaAndListShowsIt() async throws {
        let kafka = try KafkaFixture()
        let storeDirectory = try TemporaryDirectory(prefix: "flowmeter-store")
        defer { storeDirectory.remove() }
        let path = storeDirectory.file("flowmeter.sqlite")
        let finished = Timestamp(secondsSinceEpoch: Int64(Date().timeIntervalSince1970) - 3600).rfc3339String
        let added = try await FlowmeterExecutable.run([
            "deploys", "add", "--service", "page-api", "--version", "2026.11.30-2", "--finished-at", finished,
            "--commit", "9f2c1ab", "--store", path, "--kafka", kafka.bootstrapServers.joined(separator: ","),
        ])
        #expect(added.status == 0, "\(added.errors)")
        let id = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!id.isEmpty)

        let listed = try await FlowmeterExecutable.run(["deploys", "list", "--store", path, "--format", "json"])
        #expect(listed.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
        let deploys = try #require(json?["deploys"] as? [[String: Any]])
        #expect(deploys.map { $0["id"] as? String } == [id])
        #expect(deploys.first?["service"] as? String == "page-api")
        let table = try await FlowmeterExecutable.run(["deploys", "list", "--store", path])
        #expect(table.output.contains("page-api") && table.output.contains("2026.11.30-2"))

        let published = try await kafka.consumeAll(topic: KafkaFixture.deploysTopic, expecting: 1)
        #expect(try published.map { try DeployMarker(jsonBytes: $0.value).id } == [id])

        let missing = try await FlowmeterExecutable.run(["deploys", "add", "--service", "x", "--store", path])
        #expect(missing.status == 2)
    }

    @Test func watchOnceOverAStoreWithAnUngatedTypePublishesAnAlert() async throws {
        let kafka = try KafkaFixture()
        let storeDirectory = try TemporaryDirectory(prefix: "flowmeter-store")
        defer { storeDirectory.remove() }
        let path = storeDirectory.file("flowmeter.sqlite")
        // Release builds of 5.2.1 report type-0…type-3 as unknown from 10 installs, about 50 events each.
        let serve = try await ServeProcess(["--kafka", "none", "--store", path])
        _ = try await serve.postTraffic(batches: 30, installs: 10)
        #expect(try await serve.terminate() == 0)

        let watched = try await FlowmeterExecutable.run([
            "watch", "--once", "--store", path, "--kafka", kafka.bootstrapServers.joined(separator: ","),
            "--since", "1h",
        ])
        #expect(watched.status == 3, "\(watched.errors)")
        let alerts = try await kafka.consume(topic: KafkaFixture.alertsTopic) { messages in
            messages.contains { String(decoding: $0.value, as: UTF8.self).contains(#""kind":"ungatedType""#) }
        }
        let ungated = alerts.filter { String(decoding: $0.value, as: UTF8.self).contains(#""kind":"ungatedType""#) }
        #expect(!ungated.isEmpty)
        for message in ungated {
            let value = try #require(try JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any])
            #expect(value["status"] as? String == "firing")
            #expect(message.key == (value["fingerprint"] as? String).map { Array($0.utf8) })
            #expect(message.header(named: "schema") == Array(KafkaFixture.alertsTopic.utf8))
        }

        // A second pass finds the same alerts still open: nothing new is published, and the exit status says firing.
        let again = try await FlowmeterExecutable.run(["watch", "--once", "--store", path, "--since", "1h"])
        #expect(again.status == 3)
        #expect(try openRollupStore(url: path).openAlerts().count >= ungated.count)
    }
}
