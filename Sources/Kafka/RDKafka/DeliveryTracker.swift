import FlowmeterModels
import FlowmeterWire
import Synchronization

/// Counts one batch's outstanding delivery reports and fires its completion once, when the last one arrives.
///
/// Each enqueued message carries a pointer to a `Slot` (its batch index and this tracker) as librdkafka's per-message
/// opaque. Slots live in chunks that never move, so a batch costs a few allocations, not one per message. The tracker
/// keeps itself alive (one retain) until the completion has run.
final class DeliveryTracker: @unchecked Sendable {
    // @unchecked: `chunks`, `slotCount`, `isCancelled` are written only by the single enqueuing thread before
    // `seal()`; the acquire-release decrement of `pending` orders them before `finish()` reads them.
    struct Slot {
        let tracker: Unmanaged<DeliveryTracker>
        let index: Int
        /// Where the message's header list goes back to after its report (see ``RDKafkaHeaderPool``); nil when
        /// librdkafka built the list itself, or the message has no headers.
        let headerPool: Unmanaged<RDKafkaHeaderPool>?
    }

    private let completion: @Sendable (KafkaBatchOutcome) -> Void
    private let recordsReports: Bool
    /// What owns the bytes of messages enqueued without a copy; held until the completion has run.
    let owner: (any AnyObject & Sendable)?
    /// When the batch was enqueued, in `MonotonicClock` nanoseconds: read once per report, where
    /// `ContinuousClock`'s instants cost two 128-bit multiplies to read and a 128-bit division to turn into seconds.
    let enqueuedAt: Int64
    // Starts at 1: the enqueuer's hold, released by `seal()`, so the batch cannot finish while it is being built.
    private let pending = Atomic<Int>(1)
    private let persisted = Atomic<Int>(0)
    private let failures = Mutex<[KafkaDeliveryReport]>([])
    private let reports = Mutex<[KafkaDeliveryReport]>([])
    private var chunks: [UnsafeMutablePointer<Slot>] = []
    private var chunkCapacity: Int
    private var slotCount = 0
    private var isCancelled = false

    init(
        capacityHint: Int, recordsReports: Bool, owner: (any AnyObject & Sendable)? = nil,
        completion: @escaping @Sendable (KafkaBatchOutcome) -> Void
    ) {
        self.completion = completion
        self.recordsReports = recordsReports
        self.owner = owner
        self.chunkCapacity = max(1, min(capacityHint, 4096))
        self.enqueuedAt = MonotonicClock.nanoseconds()
        _ = Unmanaged.passRetained(self)
    }

    deinit {
        for chunk in chunks {
            chunk.deallocate()
        }
    }

    /// Reserves the next slot and counts one more outstanding report; returns the opaque for librdkafka.
    /// `headerPool` (which must outlive the report) takes back the message's header list.
    func beginMessage(headerPool: RDKafkaHeaderPool? = nil) -> UnsafeMutableRawPointer {
        let offsetInChunk = slotCount % chunkCapacity
        if offsetInChunk == 0 && slotCount / chunkCapacity == chunks.count {
            chunks.append(.allocate(capacity: chunkCapacity))
        }
        let slot = chunks[slotCount / chunkCapacity] + offsetInChunk
        slot.initialize(
            to: Slot(
                tracker: Unmanaged.passUnretained(self), index: slotCount,
                headerPool: headerPool.map { Unmanaged.passUnretained($0) }))
        slotCount += 1
        pending.wrappingAdd(1, ordering: .relaxed)
        return UnsafeMutableRawPointer(slot)
    }

    /// Takes back the slot from `beginMessage()` when librdkafka refused the message.
    func abandonMessage() {
        slotCount -= 1
        pending.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Ends the batch without calling the completion, when the caller reports the failure itself and nothing was
    /// enqueued.
    func cancel() {
        precondition(slotCount == 0, "cannot cancel a batch with enqueued messages")
        isCancelled = true
        seal()
    }

    /// Releases the enqueuer's hold: from now on the last delivery report fires the completion.
    func seal() {
        if pending.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finish()
        }
    }

    /// Records one delivery report; called on the thread serving librdkafka's callbacks.
    func record(_ report: KafkaDeliveryReport) {
        if report.error == nil {
            persisted.wrappingAdd(1, ordering: .relaxed)
        } else {
            failures.withLock { $0.append(report) }
        }
        if recordsReports {
            reports.withLock { $0.append(report) }
        }
        if pending.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finish()
        }
    }

    private func finish() {
        if !isCancelled {
            let failed = failures.withLock { $0.sorted { $0.index < $1.index } }
            let outcome = KafkaBatchOutcome(
                enqueued: slotCount,
                persisted: persisted.load(ordering: .relaxed),
                failures: failed,
                reports: reports.withLock { $0 }
            )
            completion(outcome)
        }
        Unmanaged.passUnretained(self).release()
    }
}
