import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

@testable import Collector

/// The disk spool without Kafka: append, read back in order, settle, recover after a restart with torn, damaged and
/// empty segments, stay within its bound, and keep one collector per directory.
@Suite struct SpoolTests {
    /// A spool in a fresh directory (or `directory`), with the metrics it counts into.
    struct Opened {
        let spool: Spool
        let metrics: CollectorMetrics
    }

    static func open(_ directory: String, maxBytes: Int = 1 << 30, segmentBytes: Int? = nil) throws -> Opened {
        let metrics = CollectorMetrics(typeCap: 5)
        let spool = try Spool(
            configuration: Spool.Configuration(directory: directory, maxBytes: maxBytes, segmentBytes: segmentBytes),
            metrics: metrics, logger: Logger(threshold: .error, sink: { _ in }))
        return Opened(spool: spool, metrics: metrics)
    }

    static func batch(_ prefix: String, count: Int = 3) -> SpoolBatch {
        var batch = SpoolBatch(topic: "flowmeter.events.v1", headers: SpoolFormatTests.headers)
        for index in 0..<count {
            batch.append(key: Array("\(prefix)-key".utf8)[...], value: Array("\(prefix)-\(index)".utf8)[...])
        }
        return batch
    }

    /// Appends and waits (bounded) for the writer's answer.
    static func append(_ batch: SpoolBatch, inFlight: Int = 0, to spool: Spool) throws -> Spool.Location {
        let answer = Mutex<Result<Spool.Location, CollectorError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        spool.append(batch, inFlight: inFlight) { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        return try #require(answer.withLock { $0 }).get()
    }

    /// Reads every record the spool hands out now; returns values and locations.
    static func drain(_ spool: Spool) -> [(value: String, location: Spool.Location)] {
        var read: [(String, Spool.Location)] = []
        for _ in 0..<1_000 {
            guard let chunk = spool.nextChunk(maxRecords: 2, maxBytes: 200) else { break }
            for (record, location) in zip(chunk.records, chunk.locations) {
                read.append((String(decoding: chunk.bytes[record.value], as: UTF8.self), location))
            }
        }
        return read
    }

    static func settleAll(_ read: [(value: String, location: Spool.Location)], in spool: Spool) {
        var counts: [UInt64: Int] = [:]
        for item in read { counts[item.location.segment, default: 0] += 1 }
        spool.acknowledge(counts)
    }

    static func segmentFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".seg") }
            .sorted()
    }

    /// Waits until `condition` holds (the suite's hang guard bounds it); the writer retires settled segments on its
    /// own thread.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        await TestSupport.eventually(condition)
    }

    @Test func recordsComeBackInOrderAndSettledSegmentsAreRemoved() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-spool")
        let opened = try Self.open(directory.path)
        let spool = opened.spool
        #expect(!spool.isEngaged)
        _ = try Self.append(Self.batch("a"), to: spool)
        _ = try Self.append(Self.batch("b", count: 2), to: spool)
        #expect(spool.isEngaged)
        #expect(spool.status.records == 5)
        #expect(spool.status.oldestAppendedAt != nil)

        let read = Self.drain(spool)
        #expect(read.map(\.value) == ["a-0", "a-1", "a-2", "b-0", "b-1"])
        #expect(spool.nextChunk(maxRecords: 10, maxBytes: 1 << 20) == nil)
        Self.settleAll(read, in: spool)
        #expect(!spool.isEngaged)
        #expect(await Self.eventually { Self.segmentFiles(directory.path).isEmpty })
        #expect(spool.status.bytes == 0 && spool.status.segments == 0 && spool.status.records == 0)
        spool.close()
    }

    @Test func recordsStillInFlightAreNotHandedOutAndSettleFromTheirReports() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-spool")
        let spool = try Self.open(directory.path).spool
        let location = try Self.append(Self.batch("a", count: 3), inFlight: 2, to: spool)
        _ = try Self.append(Self.batch("b", count: 1), to: spool)
        let read = Self.drain(spool)
        #expect(read.map(\.value) == ["a-2", "b-0"])
        // The original send persisted the first record and failed the second, which is handed out again.
        spool.acknowledge([location.segment: 1])
        let second = Spool.Location(segment: location.segment, offset: location.offset + Self.batch("a").frameEnd(0))
        spool.requeue([second])
        let again = Self.drain(spool)
        #expect(again.map(\.value) == ["a-1"])
        Self.settleAll(read + again, in: spool)
        #expect(spool.status.records == 0)
        #expect(await Self.eventually { Self.segmentFiles(directory.path).isEmpty })
        spool.close()
    }

    @Test func aRestartReplaysWhatWasNotSettled() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-spool")
        do {
            let spool = try Self.open(directory.path).spool
            _ = try Self.append(Self.batch("a"), to: spool)
            let first = Self.drain(spool)
            spool.acknowledge([first[0].location.segment: 1])
            _ = try Self.append(Self.batch("b"), to: spool)
            spool.close()
        }
        let reopened = try Self.open(directory.path).spool
        #expect(reopened.recovery.records == 6)
        #expect(reopened.recovery.tornTails == 0)
        // Settling is not written down: everything in a segment not yet removed is delivered again (at least once).
        #expect(Self.drain(reopened).map(\.value) == ["a-0", "a-1", "a-2", "b-0", "b-1", "b-2"])
        reopened.close()
    }

    @Test func aTornTailADamagedRecordAndAnEmptySegmentAreCountedAndNothingElseIsLost() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-spool")
        let first = directory.file(Spool.segmentName(1))
        let second = directory.file(Spool.segmentName(2))
        let batches = [Self.batch("a"), Self.batch("b"), Self.batch("c")]
        var sealed = batches
        for index in sealed.indices { sealed[index].sealChecksums() }
        // Segment 1: a, then b with a damaged payload, then c. Segment 2: a record, then a torn one.
        var bytes = SpoolFormatTests.segment(sealed)
        bytes[SpoolFormat.segmentHeaderSize + sealed[0].bytes.count + 30] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: first))
        var tail = Self.batch("d", count: 2)
        tail.sealChecksums()
        try Data(SpoolFormat.segmentHeader + tail.bytes.dropLast(3)).write(to: URL(fileURLWithPath: second))
        // Segments 3 and 4: created, and the crash came before (or during) the header.
        try Data().write(to: URL(fileURLWithPath: directory.file(Spool.segmentName(3))))
        try Data(SpoolFormat.segmentHeader).write(to: URL(fileURLWithPath: directory.file(Spool.segmentName(4))))

        let opened = try Self.open(directory.path)
        let spool = opened.spool
        let recovery = spool.recovery
        #expect(recovery.tornTails == 1)
        #expect(recovery.damagedRecords == 1)
        #expect(recovery.emptySegments == 2)
        #expect(recovery.records == 3 + 2 + 3 + 1)
        let values = Self.drain(spool).map(\.value)
        #expect(values == ["a-0", "a-1", "a-2", "b-1", "b-2", "c-0", "c-1", "c-2", "d-0"])
        let metrics = opened.metrics.registry.render()
        #expect(metrics.contains(#"flowmeter_spool_dropped_records_total{reason="torn"} 1"#))
        #expect(metrics.contains(#"flowmeter_spool_dropped_records_total{reason="corrupt"} 1"#))
        #expect(Self.segmentFiles(directory.path) == [Spool.segmentName(1), Spool.segmentName(2)])
        spool.close()
    }

    @Test func aBatchThatWouldPassTheBoundIsRefusedUntilRoomIsFreed() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-spool")
        let batch = Self.batch("x", count: 20)
        let spool = try Self.open(directory.path, maxBytes: batch.bytes.count * 3 + 200, segmentBytes: 1).spool
        var appended: [Spool.Location] = []
        var refusal: CollectorError?
        for _ in 0..<5 {
            do {
                appended.append(try Self.append(batch, to: spool))
            } catch let error as CollectorError {
                refusal = error
                break
            }
        }
        #expect(appended.count == 3)
        #expect(refusal?.code == .spoolFull)
        #expect(spool.status.isFull)
        let read = Self.drain(spool)
        #expect(read.count == 60)
        Self.settleAll(read, in: spool)
        #expect(await Self.eventually { !spool.status.isFull && spool.status.bytes == 0 })
        _ = try Self.append(batch, to: spool)
        spool.close()
    }

    @Test func segmentsRollAndTheReaderCrossesThem() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-spool")
        let spool = try Self.open(directory.path, segmentBytes: 64).spool
        for name in ["a", "b", "c"] { _ = try Self.append(Self.batch(name, count: 2), to: spool) }
        #expect(spool.status.segments == 3)
        let read = Self.drain(spool)
        #expect(read.map(\.value) == ["a-0", "a-1", "b-0", "b-1", "c-0", "c-1"])
        #expect(Set(read.map(\.location.segment)).count == 3)
        Self.settleAll(Array(read.prefix(2)), in: spool)
        #expect(await Self.eventually { spool.status.segments == 2 })
        Self.settleAll(Array(read.dropFirst(2)), in: spool)
        #expect(await Self.eventually { Self.segmentFiles(directory.path).isEmpty })
        spool.close()
    }

    @Test func oneCollectorPerDirectory() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-spool")
        let spool = try Self.open(directory.path).spool
        #expect {
            _ = try Self.open(directory.path)
        } throws: { error in
            (error as? CollectorError)?.code == .spoolUnavailable
        }
        spool.close()
        let again = try Self.open(directory.path).spool
        again.close()
    }
}
