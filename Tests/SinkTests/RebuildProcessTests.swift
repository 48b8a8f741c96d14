import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import Sink
import TestSupport
import Testing

/// `flowmeter store rebuild`, the real executable against the mock cluster: a store rebuilt from the batches topic
/// equals the one the live sink built, row by row.
@Suite(.serialized) struct RebuildProcessTests {
    /// Publishes traffic with retried copies (the same batches again, through another collector, later), lets a
    /// live sink build the fixture's store, and returns how many records the topic holds.
    private func buildLiveStore(_ fixture: SinkFixture) async throws -> Int {
        let traffic = try await fixture.publishTraffic(batches: 150, installs: 25)
        let producer = try fixture.kafka.makeProducer()
        let now = Int64(Date().timeIntervalSince1970)
        var copies = 0
        for index in stride(from: 0, to: 150, by: 4) {
            for message in SinkFixture.messages(
                batchID: "batch-\(index)", client: SinkFixture.client(index: index),
                events: SinkFixture.events(index: index, now: now), installHash: SinkFixture.installHash(index % 25),
                receivedAt: Timestamp(secondsSinceEpoch: now + 30), collector: "collector-b")
            {
                _ = try await producer.send(message)
                copies += 1
            }
        }
        _ = await producer.shutdown(timeout: .seconds(5))
        let records = traffic.messages + copies
        let sink = try fixture.makeSink(group: "live")
        defer { sink.stop() }
        let built = try await drive(sink) { $0.applied + $0.duplicates == records }
        #expect(built)
        #expect(sink.counters.duplicates == copies)
        return records
    }

    /// Everything the two stores hold that a sink writes: rollups, positions and counted batches, and the row count
    /// of every table.
    private func expectSameRows(_ live: any RollupStore, _ rebuilt: any RollupStore, partitions: Int) throws {
        let now = Int64(Date().timeIntervalSince1970)
        let from = Timestamp(secondsSinceEpoch: now - 86_400), to = Timestamp(secondsSinceEpoch: now + 86_400)
        // By value, as multisets: a description lists a dictionary (a rollup's releases, builds) in its instance's
        // order, which two equal rollups need not share.
        func sameRows<Row: Equatable>(_ read: (any RollupStore) throws -> [Row]) throws -> (count: Int, same: Bool) {
            let expected = try read(live)
            var remaining = try read(rebuilt)
            for row in expected {
                guard let index = remaining.firstIndex(of: row) else { return (expected.count, false) }
                remaining.remove(at: index)
            }
            return (expected.count, remaining.isEmpty)
        }
        let series = try sameRows { try $0.seriesRollups(SeriesQuery(from: from, to: to)) }
        #expect(series.count > 0)
        #expect(series.same)
        let versions = try sameRows { try $0.versionRollups(from: from, to: to, appID: nil) }
        #expect(versions.count > 0)
        #expect(versions.same)
        // The builds the batches named are part of what is compared.
        #expect(try live.versionRollups(from: from, to: to, appID: nil).contains(where: { !$0.builds.isEmpty }))
        for partition in 0..<partitions {
            let a = try live.position(topic: KafkaFixture.batchesTopic, partition: partition)
            let b = try rebuilt.position(topic: KafkaFixture.batchesTopic, partition: partition)
            #expect(a.nextOffset == b.nextOffset, "partition \(partition)")
            #expect(Set(a.counted) == Set(b.counted), "partition \(partition)")
        }
        let liveTables = try #require(live as? any RollupStoreMaintenance).stats().tables
        let rebuiltTables = try #require(rebuilt as? any RollupStoreMaintenance).stats().tables
        #expect(liveTables.map { "\($0.name) \($0.rows)" } == rebuiltTables.map { "\($0.name) \($0.rows)" })
    }

    @Test func rebuildIntoAnEmptyStoreEqualsTheLiveStore() async throws {
        let fixture = try SinkFixture(partitions: 3)
        let records = try await buildLiveStore(fixture)
        let path = fixture.directory.file("rebuilt.sqlite")
        let servers = fixture.kafka.bootstrapServers.joined(separator: ",")
        let rebuilt = try await FlowmeterExecutable.run(
            [
                "store", "rebuild", "--store", path, "--kafka", servers,
                "--dead-letters", fixture.directory.file("rebuild-dead-letters.jsonl"),
            ], timeout: Eventually.hangGuard)
        try #require(rebuilt.status == 0, "\(rebuilt.output)\n\(rebuilt.errors)")
        #expect(
            rebuilt.output.contains("rebuilt \(path) from flowmeter.batches.v1: \(records) records in 3 partitions"))
        #expect(rebuilt.output.contains("38 copies skipped"))
        #expect(rebuilt.errors.contains("rebuilding from flowmeter.batches.v1: 3 partitions"))
        #expect(rebuilt.errors.contains("partition 2: offset"))
        #expect(rebuilt.errors.contains("(done)"))
        try expectSameRows(fixture.store, try openRollupStore(url: path), partitions: 3)

        // Again into the same store: refused, saying what --force would do; nothing changes.
        let again = try await FlowmeterExecutable.run(
            ["store", "rebuild", "--store", path, "--kafka", servers, "--quiet"], timeout: Eventually.hangGuard)
        #expect(again.status == 1)
        #expect(again.errors.contains("is not empty"))
        #expect(again.errors.contains("With --force it would write into it as it is"))
        try expectSameRows(fixture.store, try openRollupStore(url: path), partitions: 3)

        // --force into the rebuilt store: every partition already stands at its end, so nothing is counted twice.
        let forced = try await FlowmeterExecutable.run(
            ["store", "rebuild", "--store", path, "--kafka", servers, "--quiet", "--force"],
            timeout: Eventually.hangGuard)
        #expect(forced.status == 0, "\(forced.output)\n\(forced.errors)")
        #expect(forced.errors.isEmpty)
        try expectSameRows(fixture.store, try openRollupStore(url: path), partitions: 3)
    }

    @Test func unreachableKafkaAndUsageErrorsAreClear() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-rebuild")
        defer { directory.remove() }
        let path = directory.file("rebuilt.sqlite")
        // Nothing listens on port 1.
        let missing = try await FlowmeterExecutable.run(
            ["store", "rebuild", "--store", path, "--kafka", "127.0.0.1:1", "--quiet"], timeout: Eventually.hangGuard)
        #expect(missing.status == 1)
        #expect(
            missing.errors.contains("could not read the partitions of flowmeter.batches.v1 from 127.0.0.1:1"),
            "\(missing.errors)")
        let noKafka = try await FlowmeterExecutable.run(["store", "rebuild", "--store", path])
        #expect(noKafka.status == 2)
        #expect(noKafka.errors.contains("--kafka"))
        let help = try await FlowmeterExecutable.run(["store", "rebuild", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--dedupe-horizon"))
        #expect(help.output.contains("flowmeter.batches.v1"))
        #expect(help.output.contains("--force"))
    }
}
