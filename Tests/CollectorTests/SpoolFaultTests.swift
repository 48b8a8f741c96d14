import Foundation
import Kafka
import Logging
import TestSupport
import Testing

@testable import Collector

#if canImport(Glibc)
    import Glibc
#endif

/// docs/reliability.md C3: nothing the spool acknowledged is deleted or dropped. A corrupted length field in a closed
/// segment costs only its record (at start and at read time, one resync for both); a read that fails is retried
/// with backoff and never settles anything; records Kafka refuses for good go to the dead-letter segment, from
/// which `flowmeter spool replay-dead-letters` produces them once Kafka takes them; `UNKNOWN_TOPIC_OR_PARTITION`
/// is retried.
@Suite struct SpoolFaultTests {
    /// Segment 1 holding batches a, b and c of three records each, closed (the spool that wrote it is closed);
    /// returns the file's path and where b's first frame starts.
    static func closedSegment(in directory: String) throws -> (path: String, damaged: Int) {
        let spool = try SpoolTests.open(directory).spool
        let first = try SpoolTests.append(SpoolTests.batch("a"), to: spool)
        let second = try SpoolTests.append(SpoolTests.batch("b"), to: spool)
        _ = try SpoolTests.append(SpoolTests.batch("c"), to: spool)
        spool.close()
        #expect(first.segment == second.segment)
        return (directory + "/" + Spool.segmentName(second.segment), second.offset)
    }

    /// Writes `length` into the frame length field at `offset` of the file.
    static func writeLength(_ length: UInt32, at offset: Int, of path: String) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: withUnsafeBytes(of: length.littleEndian) { Data($0) })
    }

    /// A damaged length that points past the end of the file (what the start-up scan used to take for a torn
    /// tail, dropping every valid record after it), and one that points inside the file at no frame.
    @Test(arguments: [UInt32(1 << 20), UInt32(40)])
    func c3ACorruptedLengthInAClosedSegmentCostsOnlyItsRecordAtStart(length: UInt32) throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-c3-length")
        let (path, offset) = try Self.closedSegment(in: directory.path)
        try Self.writeLength(length, at: offset, of: path)

        let opened = try SpoolTests.open(directory.path)
        let spool = opened.spool
        #expect(spool.recovery.damagedRecords == 1)
        #expect(spool.recovery.tornTails == 0)
        #expect(spool.recovery.records == 8)
        #expect(SpoolTests.drain(spool).map(\.value) == ["a-0", "a-1", "a-2", "b-1", "b-2", "c-0", "c-1", "c-2"])
        #expect(
            opened.metrics.registry.render().contains(#"flowmeter_spool_dropped_records_total{reason="corrupt"} 1"#))
        spool.close()
    }

    /// The same damage met by the replay's reader (the length field is hit after the start-up scan).
    @Test func c3ACorruptedLengthMetByTheReaderIsResyncedTheSameWay() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-c3-length-reader")
        let (path, offset) = try Self.closedSegment(in: directory.path)
        let spool = try SpoolTests.open(directory.path).spool
        #expect(spool.recovery.records == 9)
        try Self.writeLength(1 << 20, at: offset, of: path)
        var values: [String] = []
        while let chunk = spool.nextChunk(maxRecords: 100, maxBytes: 1 << 20) {
            values += chunk.records.map { String(decoding: chunk.bytes[$0.value], as: UTF8.self) }
        }
        #expect(values == ["a-0", "a-1", "a-2", "b-1", "b-2", "c-0", "c-1", "c-2"])
        spool.close()
    }

    /// A read that fails (here EISDIR: the segment's path holds a directory for a while, a real error from the
    /// kernel that root cannot bypass) hands out nothing, settles nothing and deletes nothing; the reader backs off
    /// and, once the file is back, reads every record.
    @Test func c3AFailedReadIsRetriedAndNeverDropsOrDeletes() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-c3-read")
        let (path, _) = try Self.closedSegment(in: directory.path)
        let opened = try SpoolTests.open(directory.path)
        let spool = opened.spool
        try FileManager.default.moveItem(atPath: path, toPath: path + ".aside")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(spool.nextChunk(maxRecords: 100, maxBytes: 1 << 20) == nil)
        #expect(spool.status.records == 9, "nothing settled by a failed read")
        #expect(opened.metrics.registry.render().contains("flowmeter_spool_read_errors_total 1"))
        #expect(spool.status.segments == 1)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: path + ".aside", toPath: path)
        // The reader retries after its backoff (100 ms, doubling); the wait is for the records, not for time.
        let (readAll, values) = await Self.read(9, from: spool)
        #expect(readAll)
        #expect(values == ["a-0", "a-1", "a-2", "b-0", "b-1", "b-2", "c-0", "c-1", "c-2"])
        spool.close()
    }

    @Test func c3UnknownTopicOrPartitionIsRetriedAndTopicAuthorizationIsRefusedForGood() {
        #expect(!KafkaError(.unknownTopicOrPartition, "leader moved").isRefusedForGood)
        #expect(KafkaError(.topicAuthorizationFailed, "no ACL").isRefusedForGood)
        #expect(KafkaError(.unknownTopic, "no such topic").isRefusedForGood)
        #expect(!KafkaError(.messageTimedOut, "outage").isRefusedForGood)
    }

    /// EMFILE needs a process whose descriptor limit the test may lower: this test runs
    /// ``c3TooManyOpenFilesInThisProcess()`` in a child copy of the test runner and expects it to pass there.
    @Test func c3TooManyOpenFilesDuringReplayIsRetried() async throws {
        let runner = CommandLine.arguments[0]
        let result = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "\(Self.childVariable)=1", runner, "--testing-library", "swift-testing", "--filter",
                "SpoolFaultTests/c3TooManyOpenFilesInThisProcess",
            ], timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\n\(result.errors)")
        // Swift Testing reports on standard error when it does not write to a terminal.
        let report = result.output + result.errors
        #expect(report.contains("c3TooManyOpenFilesInThisProcess() passed"), "\(runner): \(report)")
        #expect(report.contains("1 test in 1 suite passed"), "the child ran exactly that test: \(report)")
    }

    static let childVariable = "FLOWMETER_SPOOL_EMFILE_CHILD"

    /// Waits until the spool's reader has handed out `count` records (after a failed read it retries with its
    /// backoff, 100 ms doubling): whether it did, and their values in order.
    private static func read(_ count: Int, from spool: Spool) async -> (Bool, [String]) {
        var values: [String] = []
        let readAll = await eventually {
            while let chunk = spool.nextChunk(maxRecords: 100, maxBytes: 1 << 20) {
                values += chunk.records.map { String(decoding: chunk.bytes[$0.value], as: UTF8.self) }
            }
            return values.count == count
        }
        return (readAll, values)
    }

    /// Runs only in the child of ``c3TooManyOpenFilesDuringReplayIsRetried()``: lowers this process's
    /// RLIMIT_NOFILE to the descriptors it has open, so the reader's next `open` fails with EMFILE, then raises it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil, "runs in a child process only"))
    func c3TooManyOpenFilesInThisProcess() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-c3-emfile")
        _ = try Self.closedSegment(in: directory.path)
        let lines = LogBuffer()
        let metrics = CollectorMetrics(typeCap: 5)
        let spool = try Spool(
            configuration: Spool.Configuration(directory: directory.path), metrics: metrics,
            logger: Logger(threshold: .warning) { lines.append($0) })
        var saved = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved) == 0)
        // Every descriptor below the lowest free one is taken; a limit there makes the next open fail.
        let probe = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(probe >= 0)
        close(probe)
        var lowered = saved
        lowered.rlim_cur = rlim_t(probe)
        #expect(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered) == 0)
        let chunk = spool.nextChunk(maxRecords: 100, maxBytes: 1 << 20)
        #expect(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved) == 0)
        #expect(chunk == nil)
        #expect(spool.status.records == 9, "nothing settled by a failed read")
        #expect(metrics.registry.render().contains("flowmeter_spool_read_errors_total 1"))
        #expect(lines.lines.contains { $0.contains("Too many open files") }, "\(lines.lines)")
        let (readAll, _) = await Self.read(9, from: spool)
        #expect(readAll)
        spool.close()
    }
}
