import FlowmeterModels
import Rollups

/// `collector_watermarks`: the newest watermark of every collector on every partition of the rollups topic, with
/// when the store recorded it.
enum WatermarksTable {
    static let name = "collector_watermarks"
    static let keyColumns: SQLColumns = ["collector", "partition_number"]
    static let valueColumns: SQLColumns = [
        "partitions", "complete_up_to_s", "complete_up_to_ns", "is_stopped", "recorded_at",
    ]
    static var columns: SQLColumns { keyColumns + valueColumns }

    /// The row of `watermark` recorded at `now` (epoch seconds), in ``columns`` order.
    static func row(of watermark: CollectorWatermark, now: Int64) -> [SQLValue] {
        [
            .text(watermark.collector), .integer(Int64(watermark.partition)), .integer(Int64(watermark.partitions)),
            .integer(watermark.completeUpTo.secondsSinceEpoch), .integer(Int64(watermark.completeUpTo.nanoseconds)),
            .integer(watermark.isStopped ? 1 : 0), .integer(now),
        ]
    }

    /// Records `watermarks` in one transaction; each replaces the stored one of its collector and partition only
    /// when it supersedes it (newer, or a stop at the same instant), so a replayed older watermark changes nothing.
    static func record(_ watermarks: [CollectorWatermark], now: Int64, on connection: TableConnection) throws {
        guard !watermarks.isEmpty else { return }
        let table = name
        let newer = """
            excluded.complete_up_to_s > \(table).complete_up_to_s
            OR (excluded.complete_up_to_s = \(table).complete_up_to_s
                AND (excluded.complete_up_to_ns > \(table).complete_up_to_ns
                    OR (excluded.complete_up_to_ns = \(table).complete_up_to_ns
                        AND excluded.is_stopped > \(table).is_stopped)))
            """
        try connection.database.writeTransaction {
            for watermark in watermarks {
                try connection.database.update(
                    """
                    INSERT INTO \(table) (\(columns.list())) VALUES (\(columns.placeholders()))
                    ON CONFLICT (\(keyColumns.list())) DO UPDATE SET \(valueColumns.fromExcluded) WHERE \(newer)
                    """, row(of: watermark, now: now))
            }
        }
    }

    /// Every stored watermark, ordered by collector, then partition; rows that do not decode are skipped and
    /// reported.
    static func all(on connection: TableConnection) throws -> [CollectorWatermark] {
        var watermarks: [CollectorWatermark] = []
        var skipped = SkippedRows(name)
        try connection.database.query("SELECT \(columns.list()) FROM \(name)", []) { row in
            try connection.readRow(&skipped) {
                let partition = try row.int64(1)
                let partitions = try row.int64(2)
                guard
                    partitions >= 1 && partitions <= CollectorWatermark.maxPartitions && partition >= 0
                        && partition < partitions
                else {
                    throw RollupStoreError(
                        .invalidData, "Stored watermark names partition \(partition) of \(partitions)")
                }
                watermarks.append(
                    CollectorWatermark(
                        collector: try row.text(0), partition: Int(partition), partitions: Int(partitions),
                        completeUpTo: try StoredValue.timestamp(
                            seconds: try row.int64(3), nanoseconds: try row.int64(4)),
                        isStopped: try row.int64(5) != 0))
            }
        }
        connection.report(skipped)
        return watermarks.sorted {
            $0.collector != $1.collector
                ? $0.collector.utf8.lexicographicallyPrecedes($1.collector.utf8) : $0.partition < $1.partition
        }
    }
}
