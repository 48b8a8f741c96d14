import Foundation
public import Kafka

/// Produces the records of a spool's dead-letter segment (``SpoolDeadLetters``) to Kafka again, for
/// `flowmeter spool replay-dead-letters`: after the operator fixed what made Kafka refuse them (an ACL, a topic).
///
/// Safe while the collector runs: the segment is claimed by a rename under its lock, so the collector's next dead
/// letter starts a new one. Records go out in their order, in chunks; a claimed segment is removed only once every
/// record in it was persisted or written back to `dead-letters.seg` (refused again, or not delivered at all), so
/// an interrupted replay loses nothing: its claimed segment is picked up by the next replay.
public enum SpoolDeadLetterReplay {
    /// What a replay did.
    public struct Summary: Sendable, Hashable {
        /// Dead-letter segments read.
        public var segments = 0
        /// Records found in them.
        public var records = 0
        /// Records Kafka persisted.
        public var replayed = 0
        /// Records not persisted (refused again, or Kafka did not answer), written back to `dead-letters.seg`.
        public var keptAgain = 0
        /// Damaged stretches skipped (a checksum mismatch or a torn tail in a dead-letter segment).
        public var damaged = 0
        /// The first error Kafka gave for a record it did not persist, for the operator.
        public var firstError: String?
    }

    /// What a spool directory holds, read without taking its lock (`flowmeter spool inspect`).
    public struct Inspection: Sendable, Hashable {
        /// Segment files waiting for the replay.
        public var segments = 0
        /// Their bytes.
        public var segmentBytes = 0
        /// Valid records in them (the collector's replay may have settled some since).
        public var segmentRecords = 0
        /// Damaged stretches found in them.
        public var damaged = 0
        /// Records in the dead-letter segments (also ones a replay claimed and did not finish).
        public var deadLetters = 0
        /// Dead letters per topic.
        public var deadLetterTopics: [String: Int] = [:]
    }

    /// Reads what `directory` holds: its segments and its dead letters.
    public static func inspect(spoolDirectory directory: String) throws(CollectorError) -> Inspection {
        var inspection = Inspection()
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw CollectorError(.spoolUnavailable, "cannot read the spool directory \(directory): \(error)")
        }
        for name in names.sorted() where name.hasSuffix(".seg") && UInt64(name.dropLast(4)) != nil {
            let file = try SpoolFile.openForReading(directory + "/" + name)
            let bytes = try file.read(at: 0, count: try file.size())
            let scan = bytes.withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
            inspection.segments += 1
            inspection.segmentBytes += bytes.count
            inspection.segmentRecords += scan.records
            inspection.damaged += scan.damaged.count
        }
        let deadLetters = SpoolDeadLetters(directory: directory)
        var paths = deadLetters.claimed()
        if access(deadLetters.path, F_OK) == 0 { paths.append(deadLetters.path) }
        for path in paths {
            let (records, damaged) = try SpoolDeadLetters.records(in: path)
            inspection.damaged += damaged
            for record in records {
                inspection.deadLetterTopics[record.topic, default: 0] += 1
                inspection.deadLetters += 1
            }
        }
        return inspection
    }

    /// Replays every dead-letter segment of `directory` through `producer`; `progress` hears (done, total) after
    /// each chunk, on the calling task.
    public static func run(
        spoolDirectory directory: String, producer: KafkaProducer, chunkSize: Int = 1_000,
        progress: (_ done: Int, _ total: Int) -> Void
    ) async throws -> Summary {
        let deadLetters = SpoolDeadLetters(directory: directory)
        let paths = try deadLetters.claim()
        var summary = Summary()
        var loaded: [(path: String, records: [SpoolRecord])] = []
        for path in paths {
            let (records, damaged) = try SpoolDeadLetters.records(in: path)
            loaded.append((path, records))
            summary.segments += 1
            summary.records += records.count
            summary.damaged += damaged
        }
        var done = 0
        progress(0, summary.records)
        for (path, records) in loaded {
            var start = 0
            while start < records.count {
                let chunk = Array(records[start..<min(records.count, start + chunkSize)])
                let outcome = await produce(chunk, with: producer)
                var kept = Set<Int>()
                for failure in outcome.failures {
                    kept.insert(failure.index)
                    if summary.firstError == nil { summary.firstError = failure.error.map { String(describing: $0) } }
                }
                // Records the batch never enqueued have no report: they are kept as well.
                kept.formUnion(outcome.enqueued..<chunk.count)
                if outcome.enqueued < chunk.count, summary.firstError == nil {
                    summary.firstError = outcome.enqueueError
                }
                var frames: [UInt8] = []
                for index in kept.sorted() { frames += frame(of: chunk[index]) }
                try deadLetters.append(frames)
                summary.keptAgain += kept.count
                summary.replayed += chunk.count - kept.count
                done += chunk.count
                progress(done, summary.records)
                start += chunk.count
            }
            try SpoolFile.remove(path)
            try SpoolFile.synchronizeDirectory(directory)
        }
        return summary
    }

    private static func produce(_ records: [SpoolRecord], with producer: KafkaProducer) async -> (
        enqueued: Int, failures: [KafkaDeliveryReport], enqueueError: String?
    ) {
        var enqueueError: String?
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<KafkaBatchOutcome, Never>) in
            do {
                try producer.enqueueBatch(
                    capacity: records.count, completion: { continuation.resume(returning: $0) }
                ) { writer in
                    for record in records {
                        let headers = record.headers.map { KafkaHeader(name: $0.name, value: $0.value) }
                        if let key = record.key {
                            try writer.append(topic: record.topic, key: key, value: record.value, headers: headers)
                        } else {
                            try writer.append(topic: record.topic, value: record.value, headers: headers)
                        }
                    }
                }
            } catch {
                // The completion still runs once, with what was enqueued before the error.
                enqueueError = String(describing: error)
            }
        }
        return (outcome.enqueued, outcome.failures, enqueueError)
    }

    private static func frame(of record: SpoolRecord) -> [UInt8] {
        var batch = SpoolBatch(topic: record.topic, headers: record.headers, appendedAt: record.appendedAt)
        batch.append(key: record.key.map { ArraySlice($0) }, value: ArraySlice(record.value))
        batch.sealChecksums()
        return batch.bytes
    }
}
