/// SplitMix64: a small generator whose whole sequence follows from its seed, so generated test data is the same on
/// every run and a failure reproduces.
///
/// Every test target draws from this one; helpers a suite needs on top (a pick from a list, a chance, an install
/// hash) are extensions in that suite.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 bits of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `next()` reduced to `0..<bound` by remainder (0 when `bound` is under 2); cheap, and as repeatable as `next()`.
    public mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(max(bound, 1)))
    }
}
