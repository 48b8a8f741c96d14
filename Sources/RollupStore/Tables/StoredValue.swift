import FlowmeterModels
import Rollups

/// The checks every table's row decoding shares: a value the database holds but no rollup could have.
enum StoredValue {
    /// The minute window starting at `start`; throws `invalidData` unless it is a whole minute.
    static func window(_ start: Int64) throws -> MinuteWindow {
        guard start % 60 == 0 else {
            throw RollupStoreError(.invalidData, "Stored window start \(start) is not a minute")
        }
        return MinuteWindow(start: start)
    }

    /// The install sketch serialized in `bytes`; throws `invalidData` when it does not decode.
    static func sketch(_ bytes: [UInt8]) throws -> HyperLogLog {
        do {
            return try HyperLogLog(serialized: bytes)
        } catch {
            throw RollupStoreError(.invalidData, "Stored install sketch does not decode: \(error)")
        }
    }

    /// The timestamp stored as two columns; throws `invalidData` when the nanoseconds are out of range.
    static func timestamp(seconds: Int64, nanoseconds: Int64) throws -> Timestamp {
        guard nanoseconds >= 0 && nanoseconds < 1_000_000_000 else {
            throw RollupStoreError(.invalidData, "Stored nanoseconds \(nanoseconds) out of range")
        }
        return Timestamp(secondsSinceEpoch: seconds, nanoseconds: Int32(nanoseconds))
    }
}
