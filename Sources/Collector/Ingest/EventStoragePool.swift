import FlowmeterModels
import Synchronization

/// The event arrays of finished batches, kept for the next decodes (``FastBatchDecoder``'s `eventStorage`).
///
/// A batch's events array is one allocation of about 10 KiB (64 events' worth), too large for glibc's per-thread
/// cache: every one went through `malloc`'s locked path and first made it consolidate the fast bins (about 5 % of
/// the collector's CPU in a perf profile under one `make bench` cell, docs/performance.md). A batch gives its array
/// back once the delivery report has recorded its events (``recycle(_:)``); the next decode ``take()``s it, and
/// emptying it there releases the old events on an ingest thread instead of on the poll thread.
///
/// The pool keeps at most `maxKept` arrays, each of at most `maxCapacity` events, so it holds at most
/// `maxKept × maxCapacity` events' storage (about 2.5 MiB at the defaults); a larger array, or one past the bound,
/// is freed.
final class EventStoragePool: Sendable {
    private let idle = Mutex<[[DiagnosticEvent]]>([])
    let maxKept: Int
    let maxCapacity: Int

    init(maxKept: Int = 64, maxCapacity: Int = 256) {
        self.maxKept = max(0, maxKept)
        self.maxCapacity = maxCapacity
    }

    /// How many arrays the pool holds now.
    var keptCount: Int {
        idle.withLock { $0.count }
    }

    /// A kept array, emptied with its capacity, or an empty new one.
    ///
    /// When a batch still holds the kept array (its last reference not dropped yet), emptying it allocates a new
    /// one of the same capacity: the same as not pooling, never a shared buffer.
    func take() -> [DiagnosticEvent] {
        guard var events = idle.withLock({ $0.popLast() }) else { return [] }
        events.removeAll(keepingCapacity: true)
        return events
    }

    /// Keeps a finished batch's array for a later ``take()``; the events in it are released there.
    func recycle(_ events: [DiagnosticEvent]) {
        guard events.capacity > 0, events.capacity <= maxCapacity else { return }
        idle.withLock { kept in
            if kept.count < maxKept { kept.append(events) }
        }
    }
}
