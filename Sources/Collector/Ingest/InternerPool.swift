import FlowmeterModels
import FlowmeterWire
import Synchronization

/// A few ``StringInterner``s the ingest threads borrow, one per decode, so the strings every batch repeats (widget
/// types, coding paths, messages, releases) are made once per process instead of once per batch.
///
/// One lock to take an interner and one to give it back, per request; a decode never waits for another. The pool
/// keeps at most `capacity` interners (one per ingest thread is enough); with more requests at once, the extra ones
/// get a fresh interner that is dropped if the pool is full when it comes back. Memory: each interner holds at most
/// `slots × 128` bytes of strings plus its tables (about 200 KiB at the default 1,024 slots).
final class InternerPool: Sendable {
    private let idle = Mutex<[StringInterner]>([])
    private let capacity: Int
    private let slots: Int

    init(capacity: Int, slots: Int = 1_024) {
        self.capacity = max(1, capacity)
        self.slots = slots
    }

    /// How many interners the pool holds now (at most its capacity).
    var keptCount: Int {
        idle.withLock { $0.count }
    }

    /// Runs `body` with an interner of the pool's, or a fresh one when every kept one is lent out.
    func withInterner<Result, Failure: Error>(
        _ body: (inout StringInterner) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var interner = idle.withLock { $0.popLast() } ?? StringInterner(slots: slots)
        defer {
            idle.withLock { kept in
                if kept.count < capacity { kept.append(interner) }
            }
        }
        return try body(&interner)
    }
}
