import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Scale-out, proven with the real executable: three collectors and two sinks in one consumer group over one
/// PostgreSQL store, fed by the simulator through all three (as a load balancer would); one collector restarted and
/// one sink killed with SIGKILL mid-stream (its partitions stall until the group moves them). Afterwards the store
/// holds exactly the occurrences the collectors took, and
/// `ungated` and `spikes` give the answers a single process gives.
@Suite(.serialized) struct ScaleOutTests {
    static let ingestKey = "scale-ingest-key-0123456789"
    static let adminKey = "scale-admin-key-0123456789"
    static let salt = "00112233445566778899aabbccddeeff"

    @Test func threeCollectorsAndTwoSinksIntoOnePostgresStoreMatchTheGroundTruth() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-scale")
        defer { directory.remove() }
        // Six partitions, so each sink holds some and the survivor takes over the dead one's.
        let kafka = try KafkaFixture(partitions: 6)
        let servers = kafka.bootstrapServers.joined(separator: ",")
        let storeURL = try PostgresServer.shared().makeDatabase(prefix: "scaleout")
        // Made once before the sinks start, so they do not race to create it.
        _ = try openRollupStore(url: storeURL)
        let keys = try TestKeysFile.write(
            to: directory.file("keys.json"), ingestKey: Self.ingestKey,
            apps: ["com.example.shop", "com.example.reader", "com.example.travel"],
            adminKeys: [Self.adminKey])
        let executable = try FlowmeterExecutable.requiredPath()

        func startSink(_ index: Int) throws -> ChildProcess {
            try ChildProcess(
                executable,
                [
                    "sink", "--kafka", servers, "--store", storeURL, "--group", "scale-out", "--dead-letters",
                    directory.file("dead-letters-\(index).jsonl"), "--log-format", "logfmt",
                ])
        }
        func collectorArguments(_ index: Int, port: UInt16) -> [String] {
            [
                "serve", "--listen", "127.0.0.1:\(port)", "--kafka", servers, "--keys", keys, "--salt", Self.salt,
                "--collector-id", "collector-\(index)", "--log-level", "warning",
                "--shutdown-timeout", "10s", "--spool", directory.file("spool-\(index)"),
            ]
        }
        let sinks = try [startSink(0), startSink(1)]
        var collectors: [ServerProcess] = []
        defer {
            for collector in collectors { _ = collector.child.terminate(timeout: .seconds(15)) }
            for sink in sinks { _ = sink.terminate(timeout: .seconds(15)) }
        }
        collectors = try await ServerProcess.start(3, executable, within: .seconds(20), attempts: 3) { index, port in
            collectorArguments(index, port: port)
        }
        let ports = collectors.map(\.port)

        // The simulator spreads its batches over the three (the SDK retries a restarting one until it is back).
        let truthPath = directory.file("truth.json")
        let targets = ports.map { "http://127.0.0.1:\($0)" }.joined(separator: ",")
        let simulation = Task {
            try await FlowmeterExecutable.run(
                [
                    "simulate", "--target", targets, "--key", Self.ingestKey, "--admin-key", Self.adminKey, "--seed",
                    "7", "--duration", "20s", "--simulated-hours", "4", "--max-requests", "3000", "--concurrency",
                    "8", "--truth", truthPath, "--quiet",
                ], timeout: .seconds(180))
        }
        // Mid-stream: one collector restarts on the same port (a clean stop: it flushes, and says it stopped), then
        // one sink dies without leaving the group.
        let store = try openRollupStore(url: storeURL)
        func storedBatches() throws -> Int64 {
            let now = Int64(Date().timeIntervalSince1970)
            return try store.versionRollups(
                from: Timestamp(secondsSinceEpoch: now - 72 * 3600), to: Timestamp(secondsSinceEpoch: now + 3600),
                appID: nil
            ).reduce(0) { $0 + $1.batches }
        }
        // Each fault once the stream has got going past the previous one: batches counted in the store, not seconds.
        #expect(try await eventually(every: .milliseconds(250)) { try storedBatches() >= 300 })
        #expect(await collectors[1].child.stop(timeout: .seconds(20)) == 0, "\(collectors[1].child.errors)")
        let restarted = try ServerProcess(executable, port: ports[1], arguments: collectorArguments(1, port: ports[1]))
        collectors[1] = restarted
        #expect(await restarted.waitUntilReady(timeout: .seconds(60)), "\(restarted.child.errors.suffix(2000))")
        let beforeKill = try storedBatches()
        #expect(try await eventually(every: .milliseconds(250)) { try storedBatches() >= beforeKill + 200 })
        sinks[0].signal(SIGKILL)
        _ = sinks[0].waitForExit(timeout: .seconds(5))
        let simulated = try await simulation.value
        #expect(simulated.status == 0, "simulate: \(simulated.errors)")
        let simulationEnd = Timestamp(Date())
        let truth = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: truthPath))) as? [String: Any])
        let requests = try #require(truth["requests"] as? [String: Any])
        let accepted = try #require(requests["accepted"] as? Int)
        #expect(accepted == 3000, "every planned batch taken (the SDK retries through the restart): \(requests)")
        #expect(requests["eventsDropped"] as? Int == 0 && requests["occurrencesUncertain"] as? Int == 0)
        let occurrences = try #require(requests["occurrencesAccepted"] as? Int)
        let byKind = try #require(requests["occurrencesByKind"] as? [String: Int])

        // The store is complete once every partition of the batches topic is read past the end of the simulation
        // (the dead sink's move to the survivor after the session timeout); then it holds exactly what the
        // collectors took.
        var assessed = FreshnessAssessment(try store.freshness(), now: Timestamp(Date()))
        _ = try await eventually(every: .milliseconds(500)) {
            assessed = FreshnessAssessment(try store.freshness(), now: Timestamp(Date()))
            guard assessed.collectors.count == 1, let complete = assessed.completeUpTo else { return false }
            return complete >= simulationEnd && assessed.collectors.allSatisfy({ $0.status == .current })
        }
        #expect(assessed.collectors.map(\.name) == ["flowmeter.batches.v1"])
        #expect(assessed.collectors.allSatisfy { $0.status == .current && $0.partitionsReported == 6 })
        #expect(assessed.completeUpTo.map { $0 >= simulationEnd } == true, "\(assessed)")

        let now = Int64(Date().timeIntervalSince1970)
        let range = SeriesQuery(
            from: Timestamp(secondsSinceEpoch: now - 72 * 3600), to: Timestamp(secondsSinceEpoch: now + 3600))
        let series = try store.seriesRollups(range)
        #expect(series.reduce(0) { $0 + $1.events } == Int64(occurrences))
        var storedByKind: [String: Int] = [:]
        for rollup in series { storedByKind[rollup.series.kind.rawValue, default: 0] += Int(rollup.events) }
        #expect(storedByKind == byKind)
        let batches = try store.versionRollups(from: range.from, to: range.to, appID: nil).reduce(0) { $0 + $1.batches }
        #expect(batches == Int64(accepted))

        // The answers of the single-process run (EndToEndTests): the planted ungated type with its gate and deploy,
        // the typo, nothing else; one incident per planted cause.
        let window = ["--store", storeURL, "--since", "5h", "--format", "json"]
        let ungated = try await FlowmeterExecutable.run(["ungated"] + window, timeout: .seconds(30))
        #expect(ungated.status == 3, "\(ungated.errors)")
        #expect(!ungated.errors.contains("warning"), "a complete window is not warned about: \(ungated.errors)")
        let ungatedJSON = try #require(
            try JSONSerialization.jsonObject(with: Data(ungated.output.utf8)) as? [String: Any])
        let flagged = try #require(ungatedJSON["ungated"] as? [[String: Any]])
        let ungatedTruth = try #require((truth["ungated"] as? [[String: Any]])?.first)
        let typoTruth = try #require((truth["typos"] as? [[String: Any]])?.first)
        #expect(
            Set(flagged.compactMap { $0["widgetType"] as? String })
                == [
                    ungatedTruth["widgetType"] as? String, typoTruth["widgetType"] as? String,
                ].compactMap { $0 }.reduce(into: Set<String>()) { $0.insert($1) })
        let hologram = try #require(
            flagged.first { $0["widgetType"] as? String == ungatedTruth["widgetType"] as? String })
        #expect((hologram["suggestedGate"] as? [String: Any])?["minAppVersion"] as? String == "5.3.0")
        #expect(hologram["renderingVersions"] as? [String] == ungatedTruth["renderingVersions"] as? [String])
        #expect(
            (hologram["affectedVersions"] as? [[String: Any]])?.compactMap { $0["appVersion"] as? String }
                == ungatedTruth["affectedVersions"] as? [String])
        #expect(
            (hologram["suspectDeploy"] as? [String: Any])?["version"] as? String
                == (ungatedTruth["introducedBy"] as? [String: Any])?["version"] as? String)
        #expect(hologram["status"] as? String == ungatedTruth["status"] as? String)
        let typo = try #require(flagged.first { $0["widgetType"] as? String == typoTruth["widgetType"] as? String })
        #expect(typo["likelyTypoOf"] as? String == typoTruth["likelyTypoOf"] as? String)
        let freshness = try #require(ungatedJSON["freshness"] as? [String: Any])
        #expect(freshness["windowComplete"] as? Bool == true)

        let spikes = try await FlowmeterExecutable.run(["spikes"] + window, timeout: .seconds(30))
        #expect(spikes.status == 3, "\(spikes.errors)")
        let spikesJSON = try #require(
            try JSONSerialization.jsonObject(with: Data(spikes.output.utf8)) as? [String: Any])
        let incidents = try #require(spikesJSON["incidents"] as? [[String: Any]])
        let planted = try #require(truth["incidents"] as? [[String: Any]])
        func cause(_ value: [String: Any]) -> String {
            "\(value["kind"] as? String ?? "") \(value["widgetType"] as? String ?? "")"
        }
        #expect(incidents.map(cause).sorted() == planted.map(cause).sorted(), "\(incidents)")
        for incident in incidents {
            let introduced = planted.first { cause($0) == cause(incident) }?["introducedBy"] as? [String: Any]
            #expect(
                (incident["suspectDeploy"] as? [String: Any])?["version"] as? String
                    == introduced?["version"] as? String, "\(cause(incident))")
        }

        // The surviving sink and the collectors stop cleanly.
        for collector in collectors { #expect(await collector.child.stop(timeout: .seconds(20)) == 0) }
        #expect(await sinks[1].stop(timeout: .seconds(40)) == 0, "\(sinks[1].errors.suffix(2000))")
    }
}
