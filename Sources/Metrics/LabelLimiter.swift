import Synchronization

/// Bounds the distinct values of a label, such as widget types, per kind: first come, first kept.
///
/// For each kind, the first `maxValuesPerKind` distinct values `admit` sees are returned as they are, forever
/// (admission order, not popularity: a busy type that first appears after the slots filled up is reported as
/// `__other__` until the process restarts). Every later value maps to `"__other__"`. Kinds are bounded too: past
/// `maxKinds` distinct kinds, every value of a new kind maps to `"__other__"`. So a flood of random type strings
/// adds at most `maxKinds × (maxValuesPerKind + 1)` series. Safe from any thread; one lock and two hash lookups
/// per call.
public final class LabelLimiter: Sendable {
    /// The label value that stands for every value past the limit.
    public static let other = "__other__"

    /// How many distinct values each kind keeps.
    public let maxValuesPerKind: Int
    /// How many distinct kinds are tracked.
    public let maxKinds: Int
    private let admitted = Mutex<[String: Set<String>]>([:])

    /// A limiter keeping the first `maxValuesPerKind` values of each of the first `maxKinds` kinds.
    public init(maxValuesPerKind: Int, maxKinds: Int = 64) {
        precondition(maxValuesPerKind >= 0 && maxKinds >= 0, "limits must not be negative")
        self.maxValuesPerKind = maxValuesPerKind
        self.maxKinds = maxKinds
    }

    /// `value` itself when it is (or now becomes) one of `kind`'s admitted values, otherwise `"__other__"`.
    public func admit(_ value: String, kind: String = "") -> String {
        let isAdmitted = admitted.withLock { admitted -> Bool in
            if let values = admitted[kind] {
                if values.contains(value) { return true }
                guard values.count < maxValuesPerKind else { return false }
                admitted[kind, default: []].insert(value)
                return true
            }
            guard admitted.count < maxKinds, maxValuesPerKind > 0 else { return false }
            admitted[kind] = [value]
            return true
        }
        return isAdmitted ? value : Self.other
    }

    /// The values admitted so far for `kind`, sorted.
    public func admittedValues(kind: String = "") -> [String] {
        admitted.withLock { $0[kind].map { $0.sorted() } ?? [] }
    }
}
