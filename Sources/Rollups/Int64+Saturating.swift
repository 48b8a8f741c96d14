extension Int64 {
    /// `self + other`, clamped to `Int64.min...Int64.max` instead of trapping.
    ///
    /// Rollup counts come from Kafka messages, which a foreign or broken producer can fill with any number; a merge
    /// that traps would crash the sink, which then replays the same message at its restart, forever. For the
    /// non-negative counts rollups hold, saturating addition keeps the merge associative and commutative.
    func saturatingAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
