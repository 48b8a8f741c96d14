import TestSupport

extension SeededGenerator {
    /// 32 lowercase hex characters, like an install pseudonym.
    mutating func installHash() -> String {
        let high = String(next(), radix: 16)
        let low = String(next(), radix: 16)
        return String(repeating: "0", count: 16 - high.count) + high + String(repeating: "0", count: 16 - low.count)
            + low
    }
}
