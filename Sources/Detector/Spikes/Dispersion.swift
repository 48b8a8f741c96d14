/// How much more a series' bucket counts vary than Poisson counts of the same mean (variance ÷ mean, at least 1),
/// estimated from its own history.
///
/// Neighbouring buckets five minutes apart have nearly the same expected count even under a daily rhythm, so for
/// each pair of consecutive observed buckets `(x, y)`, `E[(x − y)²] ≈ 2φμ` and `E[x + y] = 2μ`: the ratio of the
/// sums `Σ(x − y)² ÷ Σ(x + y)` estimates φ without knowing the rhythm. A past incident in the history would inflate
/// it through the two pairs at its edges, so the pairs with the largest `(x − y)² ÷ (x + y)` (2%, at least one once
/// there are 10) are dropped and the rest scaled back by ``trimCorrection``, the share a χ² of one degree loses to
/// that trim.
struct Dispersion {
    /// The share of pairs dropped as outliers.
    static let trimShare = 0.02
    /// What the trim takes from a χ²(1) sum: its top 2% hold about 14% of its mean, so the rest is scaled by 1/0.86.
    static let trimCorrection = 1.15
    /// The largest dispersion believed: a series more erratic than this is judged as if it were this erratic, so
    /// one wild history cannot make every rise invisible.
    static let maximum = 30.0

    /// Sum of the kept pairs' squared differences.
    var squares: Double = 0
    /// Sum of the kept pairs' levels `x + y`.
    var levels: Double = 0
    /// How many pairs were kept.
    var pairs = 0

    /// The trimmed pair sums of `counts`, over the observed buckets in `from..<to` (bucket starts).
    init(counts: [Int64: Int64]?, from: Int64, to: Int64, bucketSeconds: Int64, isObserved: (Int64) -> Bool) {
        var pairs: [(square: Double, level: Double)] = []
        var previous: Double?
        var start = from
        while start < to {
            defer { start += bucketSeconds }
            let count = counts?[start] ?? 0
            guard count > 0 || isObserved(start) else {
                previous = nil
                continue
            }
            let value = Double(count)
            if let previous, previous + value > 0 {
                pairs.append(((previous - value) * (previous - value), previous + value))
            }
            previous = value
        }
        var dropped = 0
        if pairs.count >= 10 {
            dropped = max(1, Int((Double(pairs.count) * Self.trimShare).rounded(.up)))
            pairs.sort { $0.square * $1.level < $1.square * $0.level }
        }
        for pair in pairs.dropLast(dropped) {
            squares += pair.square
            levels += pair.level
        }
        self.pairs = pairs.count - min(dropped, pairs.count)
        if dropped > 0 { squares *= Self.trimCorrection }
    }

    /// Pools several series' sums (an app's, as the prior for its thin series).
    init(pooling parts: some Sequence<Dispersion>) {
        for part in parts {
            squares += part.squares
            levels += part.levels
            pairs += part.pairs
        }
    }

    /// The ratio of the sums, at least 1 and at most ``maximum``; 1 when there is nothing to go on.
    var ratio: Double {
        levels > 0 ? min(max(squares / levels, 1), Self.maximum) : 1
    }

    /// The ratio shrunk toward `prior` as if `priorWeight` events of the prior's dispersion were added: a series
    /// with a few events in its history takes mostly its app's dispersion, a busy one its own.
    func ratio(shrunkToward prior: Double, priorWeight: Double) -> Double {
        let pooled = (squares + priorWeight * prior) / (levels + priorWeight)
        return min(max(pooled, 1), Self.maximum)
    }
}
