public import Rollups

/// The batches one partition counted within the dedupe horizon, measured in the log's time (the batches'
/// `receivedAt`), so a replay of the log decides exactly as the first reading did.
///
/// A batch is a copy when a batch with its key (``BatchRecord/key``) was counted with a `receivedAt` at most
/// ``horizonSeconds`` before its own. Memory is bounded twice: by the horizon (keys received more than the horizon
/// before the newest are forgotten) and by ``maxEntries`` (past it the oldest keys are forgotten first, which
/// shortens the horizon under a flood rather than growing without bound). ``PartitionSteps`` also forgets a
/// partition's oldest keys (``forgetOldest()``) to keep every partition a sink holds within one sink-wide bound.
/// Forgetting early is never silent: ``evicted`` counts the keys forgotten before the horizon, and
/// ``isForgottenEarly(receivedAt:)`` tells which new batches fall where copies may no longer be recognised. The store
/// holds the same keys (the sink writes them with each step and deletes those before ``forgetBefore``), so a sink
/// that restarts, or takes the partition over, dedupes as this one would have.
public struct DedupeWindow: Sendable {
    /// How long a counted batch is remembered, in seconds of `receivedAt`.
    public let horizonSeconds: Int64
    /// The most keys remembered.
    public let maxEntries: Int
    private var seen: [Key: Int64] = [:]
    /// Keys in the order they were counted (about `receivedAt` order), forgotten from `head`.
    private var order: [Entry] = []
    private var head = 0
    /// The newest `receivedAt` counted.
    public private(set) var newest: Int64 = .min
    /// Keys counted before this instant (epoch seconds) are forgotten.
    public private(set) var forgetBefore: Int64 = .min
    /// Keys forgotten before the horizon had passed them (over ``maxEntries``, or by ``forgetOldest()``), since the
    /// window was made.
    public private(set) var evicted = 0

    /// A window holding `counted` (what the store remembers for the partition, oldest first).
    public init(horizonSeconds: Int64, maxEntries: Int, counted: [CountedBatch] = []) {
        self.horizonSeconds = max(0, horizonSeconds)
        self.maxEntries = max(1, maxEntries)
        for batch in counted.sorted(by: { ($0.receivedAt, $0.key) < ($1.receivedAt, $1.key) }) {
            let key = Key(batch.key)
            seen[key] = batch.receivedAt
            order.append(Entry(key: key, receivedAt: batch.receivedAt))
            newest = max(newest, batch.receivedAt)
        }
        forget()
    }

    /// How many keys are remembered.
    public var count: Int { seen.count }

    /// Whether the batch `key` received at `receivedAt` is to be counted: true (and remembered) for a new one, false
    /// for a copy of one counted within the horizon.
    public mutating func admit(_ key: String, receivedAt: Int64) -> Bool {
        let key = Key(key)
        if let first = seen[key], first >= forgetBefore, first >= receivedAt &- horizonSeconds {
            return false
        }
        // Counted, but as old as what is already forgotten: it would be forgotten at once.
        guard receivedAt >= forgetBefore else { return true }
        seen[key] = receivedAt
        order.append(Entry(key: key, receivedAt: receivedAt))
        newest = max(newest, receivedAt)
        forget()
        return true
    }

    /// The `receivedAt` of the oldest key remembered; nil when none is.
    public var oldestReceivedAt: Int64? { head < order.count ? order[head].receivedAt : nil }

    /// Whether a batch received at `receivedAt` falls within the horizon of the newest batch but before
    /// ``forgetBefore``: keys of that stretch were forgotten early, so a copy received there is counted again.
    public func isForgottenEarly(receivedAt: Int64) -> Bool {
        receivedAt < forgetBefore && newest != .min && receivedAt >= newest &- horizonSeconds
    }

    /// Forgets the oldest remembered keys: every key received in the same second as the oldest (the store forgets
    /// by whole seconds, ``forgetBefore``). Returns how many keys were forgotten, 0 when none was remembered.
    @discardableResult
    public mutating func forgetOldest() -> Int {
        guard let oldest = oldestReceivedAt else { return 0 }
        let before = seen.count
        forgetBefore = max(forgetBefore, oldest &+ 1)
        forget()
        return before - seen.count
    }

    private mutating func forget() {
        if newest != .min { forgetBefore = max(forgetBefore, newest &- horizonSeconds) }
        while head < order.count
            && (order[head].receivedAt < forgetBefore || seen.count > maxEntries
                || seen[order[head].key] != order[head].receivedAt)
        {
            let oldest = order[head]
            head += 1
            guard seen[oldest.key] == oldest.receivedAt else { continue }
            seen[oldest.key] = nil
            // Forgotten while the horizon still covers it: counted, so that nothing is forgotten silently.
            if oldest.receivedAt >= newest &- horizonSeconds { evicted += 1 }
            // Over the bound: everything received up to the key forgotten goes with it, in the store too.
            if oldest.receivedAt >= forgetBefore { forgetBefore = oldest.receivedAt &+ 1 }
        }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// A key as the window holds it: the 128 bits of a batch key's 32 lowercase hex digits (``BatchRecord/key``), 16
    /// bytes with nothing allocated, or, for a string of any other form, the string itself. Only the one spelling of
    /// the digits maps to `digest`, so two different strings are never the same key.
    enum Key: Hashable, Sendable {
        case digest(UInt64, UInt64)
        case other(String)

        init(_ key: String) {
            var halves: (UInt64, UInt64) = (0, 0)
            var digits = 0
            for byte in key.utf8 {
                let value: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte &- UInt8(ascii: "a") &+ 10
                default:
                    self = .other(key)
                    return
                }
                if digits < 16 {
                    halves.0 = halves.0 << 4 | UInt64(value)
                } else if digits < 32 {
                    halves.1 = halves.1 << 4 | UInt64(value)
                }
                digits += 1
            }
            self = digits == 32 ? .digest(halves.0, halves.1) : .other(key)
        }
    }

    /// One counted key and when it was received.
    private struct Entry: Sendable {
        var key: Key
        var receivedAt: Int64
    }
}
