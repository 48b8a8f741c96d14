/// SplitMix64 seeded per purpose, so each batch and each install is reproducible on its own, whatever order the
/// concurrent senders build them in.
struct SimulationRandom {
    private var state: UInt64

    /// A generator for `seed` mixed with `streams` (such as a batch index, or an app and install number).
    init(seed: UInt64, _ streams: UInt64...) {
        var state = seed
        for stream in streams {
            state = Self.mix(state &+ 0x9E37_79B9_7F4A_7C15 &* (stream &+ 1))
        }
        self.state = state
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// A value in `0..<bound`.
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

    /// A value in `0..<1`.
    mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// True with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// An upper-case UUID string.
    mutating func uuid() -> String {
        let words = [next(), next()]
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        for position in 0..<32 {
            if position == 8 || position == 12 || position == 16 || position == 20 { bytes.append(UInt8(ascii: "-")) }
            let word = words[position / 16]
            bytes.append(hex[Int(word >> UInt64((15 - position % 16) * 4) & 0xF)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
