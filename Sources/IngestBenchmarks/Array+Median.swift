extension Array where Element == Double {
    /// The middle value, or the mean of the two middle values for an even count; 0 for an empty array.
    public var median: Double {
        guard !isEmpty else { return 0 }
        let sorted = self.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
