import Foundation
import Kafka
import Logging
import TestSupport
import Testing

@testable import Collector

/// A collector started on a spool left by a crash: a torn record at the end of a segment, a damaged record in the
/// middle of another, and an empty segment. It counts them, skips them, and delivers every other record.
@Suite struct SpoolRecoveryTests {
    /// Batch records, one per id (each holding one event with that id), as the collector would have spooled them.
    static func events(_ ids: [String]) -> SpoolBatch {
        var batch = SpoolBatch(
            topic: KafkaFixture.batchesTopic,
            headers: [
                SpoolRecord.Header(name: "content-type", value: Array("application/json".utf8)),
                SpoolRecord.Header(name: "schema", value: Array(KafkaFixture.batchesTopic.utf8)),
            ])
        for id in ids {
            let value =
                #"{"batchID":"\#(id)","appID":"com.example.shop","appVersion":"5.2.1","platform":"ios","#
                + #""collector":"crashed","events":[{"id":"\#(id)","kind":"unknownType"}]}"#
            batch.append(key: Array("com.example.shop/\(id)".utf8)[...], value: Array(value.utf8)[...])
        }
        batch.sealChecksums()
        return batch
    }

    @Test func tornDamagedAndEmptySegmentsAreCountedAndEverythingElseIsDelivered() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-recovery")
        let spool = directory.file("spool")
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let first = [Self.events(["a-0", "a-1"]), Self.events(["b-0"]), Self.events(["c-0", "c-1"])]
        var segment = first.reduce(SpoolFormat.segmentHeader) { $0 + $1.bytes }
        // b-0's payload is hit in the middle of the segment.
        segment[SpoolFormat.segmentHeaderSize + first[0].bytes.count + 40] ^= 0xFF
        try Data(segment).write(to: URL(fileURLWithPath: spool + "/" + Spool.segmentName(7)))
        // The last segment ends in the middle of d-1: the crash came during that write.
        let torn = SpoolFormat.segmentHeader + Self.events(["d-0", "d-1"]).bytes.dropLast(10)
        try Data(torn).write(to: URL(fileURLWithPath: spool + "/" + Spool.segmentName(8)))
        try Data().write(to: URL(fileURLWithPath: spool + "/" + Spool.segmentName(9)))

        let fixture = try SpoolOutageTests.collector(kafka, spool: directory)
        let expected: Set<String> = ["a-0", "a-1", "c-0", "c-1", "d-0"]
        let consumed = try await SpoolChecks.consumedIDs(kafka, expecting: expected)
        #expect(expected.isSubset(of: consumed), "delivered: \(consumed.sorted())")
        #expect(!consumed.contains("b-0") && !consumed.contains("d-1"))
        #expect(await SpoolChecks.waitUntil(timeout: .seconds(20)) { fixture.collector.spooledRecords == 0 })
        #expect(await SpoolChecks.waitUntil(timeout: .seconds(5)) { SpoolChecks.segments(in: spool).isEmpty })
        let metrics = try await fixture.get("/metrics").bodyText
        #expect(SpoolChecks.sample(#"flowmeter_spool_dropped_records_total{reason="torn"}"#, in: metrics) == 1)
        #expect(SpoolChecks.sample(#"flowmeter_spool_dropped_records_total{reason="corrupt"}"#, in: metrics) == 1)
        #expect(SpoolChecks.sample("flowmeter_spool_replayed_records_total", in: metrics) == 5)
        #expect(fixture.logs.contains { $0.contains("spool recovered") && $0.contains(#""empty_segments":"1""#) })
        await fixture.shutdown()
    }

    @Test func aRealClusterWithoutASaltIsAnErrorAndEmbeddedOrNoneWarns() throws {
        var configuration = try CollectorFixture.configuration {
            $0.salt = nil
            $0.kafka = .brokers(["127.0.0.1:9"])
        }
        #expect {
            _ = try makeCollector(configuration: configuration, logger: Logger(threshold: .error) { _ in })
        } throws: { error in
            let error = error as? CollectorError
            return error?.code == .invalidConfiguration && error?.message.contains("salt") == true
        }
        configuration.kafka = .none
        let lines = LogBuffer()
        let collector = try makeCollector(
            configuration: configuration, logger: Logger(threshold: .warning) { lines.append($0) })
        #expect(lines.lines.contains { $0.contains("no install-ID salt configured") })
        _ = collector
    }
}
