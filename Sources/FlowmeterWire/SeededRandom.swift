/// SplitMix64: a small, fast generator whose whole sequence follows from its seed, the same on every platform, so
/// synthetic batches, simulated traffic, benchmark histories and test data repeat exactly.
///
/// The project's one seeded generator (tests name it `SeededGenerator`, through TestSupport); what a user needs on
/// top of it (a normal variate, a stream of seeds, a pick from a list) is an extension where it is used.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// SplitMix64's finalizer: a well-spread 64-bit hash of `value`, also for deriving seeds from a seed.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `next()` reduced to `0..<bound` by remainder (0 when `bound` is under 2).
    public mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(max(bound, 1)))
    }

    /// A uniform double in `0..<1`.
    public mutating func unit() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }

    /// An upper-case UUID string (`8-4-4-4-12` hex digits) from the next 128 bits.
    public mutating func uuid() -> String {
        let high = next()
        let low = next()
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        for position in 0..<32 {
            if position == 8 || position == 12 || position == 16 || position == 20 { bytes.append(UInt8(ascii: "-")) }
            let word = position < 16 ? high : low
            bytes.append(hex[Int(word >> UInt64((15 - position % 16) * 4) & 0xF)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
