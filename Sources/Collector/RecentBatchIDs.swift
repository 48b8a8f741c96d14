import Synchronization

/// The batch ids seen recently, so a client's retry after a lost answer is answered without publishing twice.
///
/// Two-phase: `begin` before publishing claims the id; `complete` after a 202 records the answer to repeat;
/// `abandon` after a failure (503) releases the id, so the retry publishes. Every `begin` that returns `.new`
/// must be followed by exactly one `complete` or `abandon` (use `defer`); a claim left open blocks the id until it
/// expires. Entries expire `retention` after their last change; past `capacity` entries the oldest are evicted
/// first, and so are they past `maxAnswerBytes` of stored answers (each entry holds its digest and the answer it
/// repeats; see ``answerBytes``). Eviction only means
/// a late retry publishes again, which downstream dedupe by event id absorbs.
///
/// Pass an id scoped by app (or key), such as `"\(appID)/\(batchID)"`, so one app's ids cannot shadow another's.
/// Safe from any thread; one lock per call.
///
/// Ids are remembered by a 128-bit digest (``Digest``: two SipHash values under the process's random seed), not as
/// strings: an entry is then 16 bytes of key with no string of its own to allocate, hash again or compare, where a
/// million UUID ids took a million heap strings, the largest part of this table's memory and of its lookups' cache
/// misses. Two different ids share a digest with a probability of about n²/2¹²⁹ (10⁻²⁷ for a million ids), and no
/// client can aim for it without the seed.
public final class RecentBatchIDs<Answer: Sendable>: Sendable {
    /// What `begin` found.
    public enum Admission {
        /// First sighting (or the earlier attempt was abandoned or expired): publish, then complete or abandon.
        case new
        /// Another request with this id is being handled right now: ask the client to retry later.
        case inFlight
        /// Already done: repeat this answer without publishing.
        case completed(Answer)
    }

    /// How long an id is remembered after its last change.
    public let retention: Duration
    /// The most ids remembered at once.
    public let capacity: Int
    /// The most bytes of stored answers at once, as `answerBytes` counts them; past it the oldest ids go first.
    public let maxAnswerBytes: Int
    private let answerBytes: @Sendable (Answer) -> Int
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex<State>(State())

    /// Remembers up to `capacity` ids for `retention` each, reading time from `clock` (injectable for tests).
    public init(
        retention: Duration = .seconds(600),
        capacity: Int = 1_000_000,
        maxAnswerBytes: Int = .max,
        answerBytes: @escaping @Sendable (Answer) -> Int = { _ in 0 },
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        precondition(capacity > 0, "capacity must be positive")
        self.retention = retention
        self.capacity = capacity
        self.maxAnswerBytes = maxAnswerBytes
        self.answerBytes = answerBytes
        self.clock = clock
    }

    /// Claims `id` if it is new, or reports the earlier attempt in flight or its answer.
    public func begin(_ id: String) -> Admission {
        let id = Digest(id)
        let now = clock()
        return state.withLock { state in
            state.expire(before: now - retention, capacity: capacity, maxBytes: maxAnswerBytes)
            switch state.entries[id]?.phase {
            case .inFlight: return .inFlight
            case .completed(let answer): return .completed(answer)
            case nil:
                state.record(id, .inFlight, bytes: 0, at: now)
                state.expire(before: now - retention, capacity: capacity, maxBytes: maxAnswerBytes)
                return .new
            }
        }
    }

    /// Records `answer` for `id`, to be repeated to retries until the id expires.
    public func complete(_ id: String, answer: Answer) {
        let id = Digest(id)
        let now = clock()
        let bytes = answerBytes(answer)
        state.withLock { state in
            state.record(id, .completed(answer), bytes: bytes, at: now)
            state.expire(before: now - retention, capacity: capacity, maxBytes: maxAnswerBytes)
        }
    }

    /// Forgets `id`, so that a retry is handled as new.
    public func abandon(_ id: String) {
        let id = Digest(id)
        state.withLock { state in state.remove(id) }
    }

    /// How many ids are remembered now, in flight or completed.
    public var count: Int {
        state.withLock { $0.entries.count }
    }

    /// The bytes of the answers remembered now, as `answerBytes` counts them.
    public var storedAnswerBytes: Int {
        state.withLock { $0.answerBytes }
    }

    /// An id as the table keys it: two 64-bit SipHash values of it, each under the process's random seed with its
    /// own domain byte first. Hashed for the dictionary by one word, which is already a keyed hash.
    struct Digest: Hashable {
        let first: UInt64
        let second: UInt64

        init(_ id: String) {
            var hasher = Hasher()
            hasher.combine(UInt8(1))
            hasher.combine(id)
            first = UInt64(bitPattern: Int64(hasher.finalize()))
            hasher = Hasher()
            hasher.combine(UInt8(2))
            hasher.combine(id)
            second = UInt64(bitPattern: Int64(hasher.finalize()))
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(first)
        }
    }

    private enum Phase {
        case inFlight
        case completed(Answer)
    }

    private struct Entry {
        var phase: Phase
        var sequence: UInt64
        var bytes: Int
    }

    private struct State: ~Copyable {
        var entries: [Digest: Entry] = [:]
        // Every change appends here, oldest first; an item whose sequence no longer matches its entry is stale.
        var order: [(id: Digest, sequence: UInt64, at: ContinuousClock.Instant)] = []
        var head = 0
        var nextSequence: UInt64 = 0
        var answerBytes = 0

        mutating func record(_ id: Digest, _ phase: Phase, bytes: Int, at now: ContinuousClock.Instant) {
            nextSequence += 1
            let replaced = entries.updateValue(Entry(phase: phase, sequence: nextSequence, bytes: bytes), forKey: id)
            answerBytes += bytes - (replaced?.bytes ?? 0)
            order.append((id, nextSequence, now))
        }

        mutating func remove(_ id: Digest) {
            if let removed = entries.removeValue(forKey: id) { answerBytes -= removed.bytes }
        }

        mutating func expire(before cutoff: ContinuousClock.Instant, capacity: Int, maxBytes: Int) {
            while head < order.count {
                let item = order[head]
                let isLive = entries[item.id]?.sequence == item.sequence
                if isLive && item.at >= cutoff && entries.count <= capacity && answerBytes <= maxBytes { break }
                if isLive { remove(item.id) }
                head += 1
            }
            // Drop consumed and stale items once they dominate, so the queue stays proportional to the entries.
            if head > 1_024 && head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
            if order.count - head > 2 * entries.count + 1_024 {
                order = order[head...].filter { entries[$0.id]?.sequence == $0.sequence }
                head = 0
            }
        }
    }
}

extension RecentBatchIDs.Admission: Sendable {}
