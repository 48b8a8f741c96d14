import FlowmeterModels
import Rollups

/// `sink_partitions` and `counted_batches`: where each partition of the batches topic stands (its next offset, how
/// fresh it is) and the batches counted within the dedupe horizon, written in the transaction of the rollups they
/// describe.
enum SinkPartitionsTable {
    static let name = "sink_partitions"
    static let counted = "counted_batches"

    /// Moves the partition's stored offset from `step.startOffset` to `step.nextOffset`; throws ``PartitionFenced``
    /// when the stored offset is not the step's start. Run first in the step's transaction: in PostgreSQL the update
    /// takes the row's lock, so a concurrent step of another sink waits for this one and then finds the offset moved.
    static func advance(_ step: PartitionStep, now: Int64, on connection: TableConnection) throws {
        let database = connection.database
        let topic = SQLValue.text(step.topic)
        let partition = SQLValue.integer(Int64(step.partition))
        let changed: Int
        if let start = step.startOffset {
            // Freshness only moves forward, and a step that does not know it leaves it as it was.
            let freshness =
                step.completeUpTo == nil
                ? "" : ", complete_up_to_s = $6, complete_up_to_ns = $7"
            let complete: [SQLValue] =
                step.completeUpTo.map { [.integer($0.secondsSinceEpoch), .integer(Int64($0.nanoseconds))] } ?? []
            changed = try database.update(
                """
                UPDATE \(name) SET next_offset = $3, partitions = $4, updated_at = $5\(freshness)
                WHERE topic = $1 AND partition_number = $2 AND next_offset = $\(complete.isEmpty ? 6 : 8)
                """,
                [topic, partition, .integer(step.nextOffset), .integer(Int64(step.partitions)), .integer(now)]
                    + complete + [.integer(start)])
        } else {
            let complete: [SQLValue] =
                step.completeUpTo.map { [.integer($0.secondsSinceEpoch), .integer(Int64($0.nanoseconds))] } ?? [
                    .null, .null,
                ]
            changed = try database.update(
                """
                INSERT INTO \(name) (topic, partition_number, next_offset, partitions, updated_at, complete_up_to_s,
                    complete_up_to_ns)
                VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (topic, partition_number) DO NOTHING
                """,
                [topic, partition, .integer(step.nextOffset), .integer(Int64(step.partitions)), .integer(now)]
                    + complete)
        }
        guard changed == 1 else {
            throw PartitionFenced(
                partition: step.partition, expected: step.startOffset,
                stored: try nextOffset(topic: step.topic, partition: step.partition, on: connection))
        }
    }

    /// Remembers the step's counted batches and forgets the partition's batches received before its horizon.
    static func remember(_ step: PartitionStep, on connection: TableConnection) throws {
        let database = connection.database
        let topic = SQLValue.text(step.topic)
        let partition = SQLValue.integer(Int64(step.partition))
        try database.update(
            "DELETE FROM \(counted) WHERE topic = $1 AND partition_number = $2 AND received_s < $3",
            [topic, partition, .integer(step.forgetBefore)])
        guard !step.counted.isEmpty else { return }
        let rows = step.counted.filter { $0.receivedAt >= step.forgetBefore }.map {
            [topic, partition, SQLValue.text($0.key), .integer($0.receivedAt)]
        }
        try database.bulkInsert(
            table: counted, columns: ["topic", "partition_number", "batch_key", "received_s"], rows: rows)
    }

    /// The partition's stored next offset, nil when none.
    static func nextOffset(topic: String, partition: Int, on connection: TableConnection) throws -> Int64? {
        var offset: Int64?
        try connection.database.query(
            "SELECT next_offset FROM \(name) WHERE topic = $1 AND partition_number = $2",
            [.text(topic), .integer(Int64(partition))]
        ) { row in offset = try row.int64(0) }
        return offset
    }

    /// The partition's next offset and counted batches, oldest first.
    static func position(topic: String, partition: Int, on connection: TableConnection) throws -> PartitionPosition {
        let next = try nextOffset(topic: topic, partition: partition, on: connection)
        var batches: [CountedBatch] = []
        try connection.database.query(
            """
            SELECT batch_key, received_s FROM \(counted) WHERE topic = $1 AND partition_number = $2
            ORDER BY received_s, batch_key
            """,
            [.text(topic), .integer(Int64(partition))]
        ) { row in batches.append(CountedBatch(key: try row.text(0), receivedAt: try row.int64(1))) }
        return PartitionPosition(nextOffset: next, counted: batches)
    }

    /// Every partition's freshness as a watermark named after its topic (``CollectorWatermark``'s collector): the
    /// store holds every record appended to the partition before `completeUpTo`.
    static func watermarks(on connection: TableConnection) throws -> [CollectorWatermark] {
        var watermarks: [CollectorWatermark] = []
        var skipped = SkippedRows(name)
        try connection.database.query(
            """
            SELECT topic, partition_number, partitions, complete_up_to_s, complete_up_to_ns FROM \(name)
            WHERE complete_up_to_s IS NOT NULL
            """, []
        ) { row in
            try connection.readRow(&skipped) {
                let partition = try row.int64(1)
                let partitions = try row.int64(2)
                guard
                    partitions >= 1 && partitions <= CollectorWatermark.maxPartitions && partition >= 0
                        && partition < partitions
                else {
                    throw RollupStoreError(
                        .invalidData, "Stored position names partition \(partition) of \(partitions)")
                }
                watermarks.append(
                    CollectorWatermark(
                        collector: try row.text(0), partition: Int(partition), partitions: Int(partitions),
                        completeUpTo: try StoredValue.timestamp(
                            seconds: try row.int64(3), nanoseconds: try row.int64(4))))
            }
        }
        connection.report(skipped)
        return watermarks
    }
}
