import FlowmeterWire

/// A ``SeededRandom`` seeded per purpose, so each batch and each install is reproducible on its own, whatever order
/// the concurrent senders build them in.
struct SimulationRandom {
    private var generator: SeededRandom

    /// A generator for `seed` mixed with `streams` (such as a batch index, or an app and install number).
    init(seed: UInt64, _ streams: UInt64...) {
        var state = seed
        for stream in streams {
            state = SeededRandom.mix(state &+ 0x9E37_79B9_7F4A_7C15 &* (stream &+ 1))
        }
        generator = SeededRandom(seed: state)
    }

    mutating func next() -> UInt64 { generator.next() }

    /// A value in `0..<bound`.
    mutating func next(below bound: Int) -> Int { generator.next(below: bound) }

    /// A value in `0..<1`.
    mutating func unit() -> Double { generator.unit() }

    /// True with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// An upper-case UUID string.
    mutating func uuid() -> String { generator.uuid() }
}
