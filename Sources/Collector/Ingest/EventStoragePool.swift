import FlowmeterModels
import FlowmeterWire
import Synchronization

/// The event tables' arrays of finished batches, kept for the next decodes (``FastBatchDecoder``'s `storage`), and
/// the record writers' escaped tables.
///
/// A batch's events array is one allocation of a few KiB (64 events' worth), and its strings array and escaped
/// table are about as large: too large for glibc's per-thread cache, so every one went through `malloc`'s locked
/// path and first made it consolidate the fast bins (about 5 % of the collector's CPU in a perf profile under one
/// `make bench` cell, docs/performance.md). A batch gives its arrays back once the delivery report has recorded its
/// events (``recycle(_:)``); the next decode ``take()``s them and empties them there, so the strings of the old
/// batch are released on an ingest thread, where most were made, not on the poll thread. A writer's escaped table
/// comes back as soon as the batch's records are written (``recycle(_:)-(EscapedTable)``).
///
/// The pool keeps at most `maxKept` storages, each of at most `maxCapacity` events and eight entries per event (an
/// event names at most eight strings), so it holds at most `maxKept × maxCapacity` events (under 1 MiB at the defaults,
/// an event is under 64 bytes) and eight times as many entries (16 bytes each, 2 MiB, plus the strings they hold until
/// the next decode empties them) and 64 bytes of ids per event (a UUID is 36), and at most `maxKept` escaped tables of
/// at most `maxScratchBytes` (64 × 64 KiB); a larger one, or one past the bound, is freed. (A 50-event batch names
/// about 170 entries: bounded at `maxCapacity` entries, its strings array, whose capacity the allocator rounds up, was
/// often refused.)
final class EventStoragePool: Sendable {
    private let idle = Mutex<[EventTableStorage]>([])
    private let scratches = Mutex<[EscapedTable]>([])
    let maxKept: Int
    let maxCapacity: Int
    let maxScratchBytes: Int

    init(maxKept: Int = 64, maxCapacity: Int = 256, maxScratchBytes: Int = 64 << 10) {
        self.maxKept = max(0, maxKept)
        self.maxCapacity = maxCapacity
        self.maxScratchBytes = maxScratchBytes
    }

    /// How many storages the pool holds now.
    var keptCount: Int {
        idle.withLock { $0.count }
    }

    /// How many escaped tables the pool holds now.
    var keptScratchCount: Int {
        scratches.withLock { $0.count }
    }

    /// A kept storage, emptied with its capacity, or an empty new one.
    ///
    /// When a batch still holds the kept arrays (its last reference not dropped yet), emptying them allocates new
    /// ones of the same capacity: the same as not pooling, never a shared buffer.
    func take() -> EventTableStorage {
        guard var storage = idle.withLock({ $0.popLast() }) else { return EventTableStorage() }
        storage.removeAll()
        return storage
    }

    /// Keeps a finished batch's arrays for a later ``take()``.
    func recycle(_ storage: EventTableStorage) {
        let capacities = (storage.eventCapacity, storage.stringCapacity)
        guard capacities.0 > 0 || capacities.1 > 0, capacities.0 <= maxCapacity, capacities.1 <= 8 * maxCapacity,
            storage.idByteCapacity <= 64 * maxCapacity
        else { return }
        idle.withLock { kept in
            if kept.count < maxKept { kept.append(storage) }
        }
    }

    /// A kept escaped table, or a new one.
    func takeScratch() -> EscapedTable {
        scratches.withLock { $0.popLast() } ?? EscapedTable()
    }

    /// Keeps a writer's escaped table for a later ``takeScratch()``; the writer must be done with it.
    func recycle(_ scratch: EscapedTable) {
        guard scratch.capacity <= maxScratchBytes else { return }
        scratches.withLock { kept in
            if kept.count < maxKept { kept.append(scratch) }
        }
    }
}
