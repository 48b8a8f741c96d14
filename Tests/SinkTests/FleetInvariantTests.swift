import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/reliability.md C1, with the real executable: three collectors, each request sent to one picked at random (as a
/// load balancer would), clients that retry a batch through another collector after any answer but 202 and send
/// some acknowledged batches again (at once and seconds later), two sinks in one group, a collector and a sink
/// killed with SIGKILL under load, a broker outage, a sink added and one removed. Afterwards the store's totals
/// equal the ground truth computed from the distinct acknowledged batches, and a sink replaying the whole topic
/// into an empty store builds the same store.
@Suite(.serialized) struct FleetInvariantTests {
    static let ingestKey = "fleet-ingest-key-0123456789"
    static let salt = "00112233445566778899aabbccddeeff"
    static let kinds = ["unknownType", "malformedPayload", "droppedElement", "unknownArrangement"]
    static let types = ["hologram", "image_text_card", "story_ring", "title_block", "video_tile"]
    static let versions = ["5.1.0", "5.2.0", "5.3.0"]

    /// How many times longer than `make test`'s bounded run each phase lasts: `FLOWMETER_FLEET_SCALE=10 swift test
    /// --filter FleetInvariantTests` is the longer run docs/sink.md quotes (each phase ends on ten times as many
    /// acknowledged batches).
    static let scale = max(1, Int(ProcessInfo.processInfo.environment["FLOWMETER_FLEET_SCALE"] ?? "") ?? 1)

    @Test(arguments: SinkStoreKind.allCases)
    func storeTotalsEqualTheDistinctAcknowledgedBatches(_ kind: SinkStoreKind) async throws {
        let scale = Self.scale
        let directory = try TemporaryDirectory(prefix: "flowmeter-fleet")
        defer { directory.remove() }
        let kafka = try KafkaFixture(partitions: 4)
        let servers = kafka.bootstrapServers.joined(separator: ",")
        let storeURL: String
        switch kind {
        case .sqlite: storeURL = directory.file("fleet.sqlite")
        case .postgres: storeURL = try PostgresServer.shared().makeDatabase(prefix: "fleet")
        }
        // Made (and migrated) once before the sinks start.
        let store = try openRollupStore(url: storeURL)
        let keys = try TestKeysFile.write(
            to: directory.file("keys.json"), ingestKey: Self.ingestKey, apps: ["com.example.shop"], adminKeys: [])
        let executable = try FlowmeterExecutable.requiredPath()

        func startSink(_ index: Int, group: String = "fleet", store url: String = storeURL) throws -> ChildProcess {
            try ChildProcess(
                executable,
                [
                    "sink", "--kafka", servers, "--store", url, "--group", group, "--dead-letters",
                    directory.file("dead-letters-\(group)-\(index).jsonl"), "--log-format", "logfmt",
                    // Polls of 50 come back full whenever a sink is behind (after a kill, an outage, a rebalance),
                    // so steps span polls through the faults too.
                    "--max-batch", "50",
                ])
        }
        func collectorArguments(_ index: Int, port: UInt16) -> [String] {
            [
                "serve", "--listen", "127.0.0.1:\(port)", "--kafka", servers, "--keys", keys, "--salt", Self.salt,
                "--collector-id", "collector-\(index)", "--log-level", "warning", "--shutdown-timeout", "10s",
                "--spool", directory.file("spool-\(index)"), "--response-deadline", "2s",
            ]
        }
        var sinks = try [startSink(0), startSink(1)]
        var collectors: [ServerProcess] = []
        defer {
            for collector in collectors { _ = collector.child.terminate(timeout: .seconds(15)) }
            for sink in sinks { _ = sink.terminate(timeout: .seconds(15)) }
        }
        collectors = try await ServerProcess.start(3, executable, within: .seconds(20), attempts: 3) { index, port in
            collectorArguments(index, port: port)
        }
        let ports = collectors.map(\.port)
        let load = FleetLoad(ports: ports)
        let loadTask = Task { try await HTTPTestClient.onThread { load.run() } }

        // The faults, each once the load has got going past the previous one.
        try await load.waitForAcknowledged(150 * scale)
        collectors[2].child.signal(SIGKILL)
        _ = collectors[2].child.waitForExit(timeout: .seconds(5))
        try await load.waitForAcknowledged(300 * scale)
        sinks[0].signal(SIGKILL)
        _ = sinks[0].waitForExit(timeout: .seconds(5))
        try await load.waitForAcknowledged(450 * scale)
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let outageStart = load.acknowledgedCount
        try await load.waitForAcknowledged(outageStart + 100 * scale)
        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        // The killed collector comes back on its port with its spool, whose batches it acknowledged.
        let restarted = try ServerProcess(executable, port: ports[2], arguments: collectorArguments(2, port: ports[2]))
        collectors[2] = restarted
        #expect(await restarted.waitUntilReady(timeout: .seconds(20)), "\(restarted.child.errors.suffix(2000))")
        sinks.append(try startSink(2))
        try await load.waitForAcknowledged(load.acknowledgedCount + 150 * scale)
        #expect(await sinks[1].stop(timeout: .seconds(40)) == 0, "\(sinks[1].errors.suffix(2000))")
        try await load.waitForAcknowledged(load.acknowledgedCount + 150 * scale)
        load.stop()
        try await loadTask.value
        // A collector that stops keeps in its spool what Kafka has not taken yet, for its next start (K9): the test
        // stops them once every spool has been replayed, so what they acknowledged is in the log.
        for (index, collector) in collectors.enumerated() {
            let replayed = try await eventually(every: .milliseconds(250)) {
                let metrics = try await collector.get("/metrics").bodyText
                return metrics.split(separator: "\n").contains("flowmeter_spool_records 0")
            }
            #expect(replayed, "collector \(index)'s spool was never replayed")
        }
        for collector in collectors { #expect(await collector.child.stop(timeout: .seconds(30)) == 0) }

        let truth = load.truth()
        print(
            "fleet (\(kind)): \(truth.batches) distinct batches acknowledged, \(load.copiesSent) copies sent, "
                + "\(truth.events.values.reduce(0, +)) occurrences")
        #expect(load.copiesSent > truth.batches)
        let totals = try await FleetTotals.waitUntil(store: store, matches: truth, timeout: .seconds(120) * scale)
        if totals.batches != truth.batchesByVersion {
            // What a failure needs to be understood: where each partition stands, and what the sinks said.
            for partition in 0..<4 {
                let stored = try store.position(topic: KafkaFixture.batchesTopic, partition: partition).nextOffset
                print("fleet (\(kind)): partition \(partition) stored at \(stored.map(String.init) ?? "none")")
            }
            for (index, sink) in sinks.enumerated() {
                print("fleet (\(kind)): sink \(index) said:\n\(sink.errors.suffix(6000))")
            }
        }
        #expect(totals.events == truth.events)
        #expect(totals.byKind == truth.byKind)
        #expect(totals.batches == truth.batchesByVersion)
        #expect(totals.decodes == truth.decodesByVersion)
        #expect(abs(totals.installs - Double(truth.installs)) <= 0.05 * Double(truth.installs) + 2)

        // A new group replays the whole topic into an empty store: the same store.
        let replayURL = directory.file("replay.sqlite")
        let replayStore = try openRollupStore(url: replayURL)
        let replay = try startSink(0, group: "fleet-replay", store: replayURL)
        sinks.append(replay)
        let replayed = try await FleetTotals.waitUntil(
            store: replayStore, matches: truth, timeout: .seconds(120) * scale)
        #expect(replayed == totals)
        #expect(try FleetTotals.rows(of: replayStore) == FleetTotals.rows(of: store))
        #expect(await replay.stop(timeout: .seconds(40)) == 0)
        #expect(await sinks[2].stop(timeout: .seconds(40)) == 0)
    }
}

/// The clients of the fleet test: batch `i` is a fixed function of `i`, posted to a random collector, retried
/// through another after any answer but 202, and some acknowledged ones are sent again through others.
final class FleetLoad: Sendable {
    private struct State {
        var acknowledged: Set<Int> = []
        var copies = 0
        var isStopping = false
    }

    let ports: [UInt16]
    private let state = Mutex(State())

    init(ports: [UInt16]) {
        self.ports = ports
    }

    var acknowledgedCount: Int { state.withLock { $0.acknowledged.count } }
    var copiesSent: Int { state.withLock { $0.copies } }

    func stop() { state.withLock { $0.isStopping = true } }

    func waitForAcknowledged(_ count: Int, timeout: Duration = .seconds(120) * FleetInvariantTests.scale) async throws {
        let deadline = ContinuousClock.now + timeout
        while acknowledgedCount < count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(acknowledgedCount >= count, "the load stalled at \(acknowledgedCount) acknowledged batches")
    }

    /// Posts batches until stopped (on the calling thread).
    func run() {
        var generator = SeededGenerator(seed: 35)
        var next = 0
        var resend: [(batch: Int, after: Int)] = []
        while !state.withLock({ $0.isStopping }) {
            let batch: Int
            if let due = resend.firstIndex(where: { $0.after <= next }) {
                batch = resend.remove(at: due).batch
            } else {
                batch = next
                next += 1
            }
            if deliver(batch, generator: &generator) {
                // One in five acknowledged batches is sent again: half at once, half a few hundred batches later.
                let roll = generator.next() % 10
                if roll == 0 { resend.append((batch, next)) } else if roll == 1 { resend.append((batch, next + 300)) }
            }
        }
    }

    /// Posts `batch` until a collector answers 202 (through another one after each failure); false when stopped
    /// first.
    private func deliver(_ batch: Int, generator: inout SeededGenerator) -> Bool {
        let body = Self.body(batch)
        var attempt = 0
        while !state.withLock({ $0.isStopping }) || attempt > 0 && attempt < 50 {
            let port = ports[Int(generator.next() % UInt64(ports.count))]
            attempt += 1
            state.withLock { $0.copies += 1 }
            if let status = try? Self.post(body, port: port), status == 202 {
                state.withLock { _ = $0.acknowledged.insert(batch) }
                return true
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    private static func post(_ body: [UInt8], port: UInt16) throws -> Int {
        let client = try HTTPTestClient(port: port, readTimeout: .seconds(10))
        defer { client.close() }
        return try client.request(
            "POST", "/v1/diagnostics",
            headers: [
                ("Authorization", "Bearer \(FleetInvariantTests.ingestKey)"), ("Content-Type", "application/json"),
                ("Content-Length", String(body.count)),
            ], body: body
        ).status
    }

    /// What batch `index` holds: its version, install, decodes and events.
    struct Batch {
        var version: String
        var install: Int
        var decodes: Int
        var events: [(kind: String, type: String, count: Int, minute: Int64)]
    }

    static let start = Int64(Date().timeIntervalSince1970) / 60 * 60 - 600

    static func batch(_ index: Int) -> Batch {
        var generator = SeededGenerator(seed: UInt64(index) &+ 1000)
        let count = Int(generator.next() % 6)
        let events = (0..<count).map { _ in
            (
                kind: FleetInvariantTests.kinds[Int(generator.next() % 4)],
                type: FleetInvariantTests.types[Int(generator.next() % 5)], count: 1 + Int(generator.next() % 3),
                minute: start + Int64(generator.next() % 10) * 60
            )
        }
        return Batch(
            version: FleetInvariantTests.versions[index % 3], install: Int(generator.next() % 200),
            decodes: Int(generator.next() % 20), events: events)
    }

    static func body(_ index: Int) -> [UInt8] {
        let batch = batch(index)
        let events = batch.events.enumerated().map { offset, event in
            let time = Date(timeIntervalSince1970: TimeInterval(event.minute + Int64(offset)))
            return """
                {"kind":"\(event.kind)","widgetType":"\(event.type)","count":\(event.count),\
                "occurredAt":"\(ISO8601DateFormatter().string(from: time))"}
                """
        }
        return Array(
            """
            {"id":"fleet-\(index)","client":{"appID":"com.example.shop","appVersion":"\(batch.version)",\
            "platform":"ios","installID":"install-\(batch.install)"},"decodes":\(batch.decodes),\
            "events":[\(events.joined(separator: ","))]}
            """.utf8)
    }

    /// The ground truth of the distinct acknowledged batches.
    func truth() -> FleetTotals {
        var totals = FleetTotals()
        var installs: Set<Int> = []
        for index in state.withLock({ $0.acknowledged }) {
            let batch = Self.batch(index)
            totals.batchesByVersion[batch.version, default: 0] += 1
            totals.decodesByVersion[batch.version, default: 0] += Int64(batch.decodes)
            installs.insert(batch.install)
            for event in batch.events {
                totals.events["\(event.kind) \(event.type) \(event.minute)", default: 0] += Int64(event.count)
                totals.byKind[event.kind, default: 0] += Int64(event.count)
            }
        }
        totals.batches = state.withLock { $0.acknowledged.count }
        totals.installs = installs.count
        return totals
    }
}

/// A store's totals as the fleet test compares them (or the ground truth's).
struct FleetTotals: Equatable {
    /// Occurrences per `kind type minute`.
    var events: [String: Int64] = [:]
    var byKind: [String: Int64] = [:]
    var batchesByVersion: [String: Int64] = [:]
    var decodesByVersion: [String: Int64] = [:]
    var batches = 0
    var installs = 0
    var installEstimate = 0.0

    var batchesTotal: Int64 { batchesByVersion.values.reduce(0, +) }

    /// The store's totals.
    static func read(_ store: any RollupStore) throws -> (
        events: [String: Int64], byKind: [String: Int64], batches: [String: Int64], decodes: [String: Int64],
        installs: Double
    ) {
        let from = Timestamp(secondsSinceEpoch: FleetLoad.start - 3600)
        let to = Timestamp(secondsSinceEpoch: FleetLoad.start + 7200)
        var events: [String: Int64] = [:]
        var byKind: [String: Int64] = [:]
        for rollup in try store.seriesRollups(SeriesQuery(from: from, to: to)) {
            events["\(rollup.series.kind.rawValue) \(rollup.series.widgetType) \(rollup.window.start)", default: 0] +=
                rollup.events
            byKind[rollup.series.kind.rawValue, default: 0] += rollup.events
        }
        var batches: [String: Int64] = [:]
        var decodes: [String: Int64] = [:]
        var installs = HyperLogLog()
        let now = Timestamp(Date())
        for rollup in try store.versionRollups(
            from: from, to: Timestamp(secondsSinceEpoch: now.secondsSinceEpoch + 3600), appID: nil)
        {
            batches[rollup.key.appVersion, default: 0] += rollup.batches
            decodes[rollup.key.appVersion, default: 0] += rollup.decodes
            installs.merge(rollup.installs)
        }
        return (events, byKind, batches, decodes, installs.estimate)
    }

    /// Waits until the store's batch total reaches the truth's (or `timeout`), then returns its totals.
    static func waitUntil(
        store: any RollupStore, matches truth: FleetTotals, timeout: Duration
    ) async throws -> (
        events: [String: Int64], byKind: [String: Int64], batches: [String: Int64], decodes: [String: Int64],
        installs: Double
    ) {
        let deadline = ContinuousClock.now + timeout
        var totals = try read(store)
        while ContinuousClock.now < deadline
            && (totals.batches.values.reduce(0, +) < truth.batchesTotal || totals.events != truth.events)
        {
            try await Task.sleep(for: .milliseconds(250))
            totals = try read(store)
        }
        return totals
    }

    /// Every series and version row of the store, for comparing two stores.
    static func rows(of store: any RollupStore) throws -> [String] {
        let from = Timestamp(secondsSinceEpoch: FleetLoad.start - 3600)
        let to = Timestamp(secondsSinceEpoch: Int64(Date().timeIntervalSince1970) + 3600)
        let series = try store.seriesRollups(SeriesQuery(from: from, to: to)).map {
            "\($0.series) \($0.window.start) \($0.events) \($0.installs.estimate)"
        }
        let versions = try store.versionRollups(from: from, to: to, appID: nil).map {
            "\($0.key) \($0.window.start) \($0.batches) \($0.cleanBatches) \($0.decodes) \($0.installs.estimate)"
        }
        return (series + versions).sorted()
    }
}
