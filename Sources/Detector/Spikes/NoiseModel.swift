import Foundation

/// The detector's noise model for one report: each series' dispersion, and how unusual a bucket must be for the
/// series it belongs to.
///
/// **Dispersion.** Each series' ``Dispersion`` comes from its buckets before the window, shrunk toward the pooled
/// dispersion of its app's series across versions by ``SpikeDetector/Configuration/dispersionPriorWeight`` events:
/// a new or rare series borrows its app's, a busy one has its own. When the buckets before the window hold fewer
/// events than that weight (a report whose window reaches back to the store's first data, `spikes --since 14d` on a
/// two-week-old store) and the judged buckets hold a long history of the series (``minJudgedPairs``), they come from
/// those as well: the trimmed pair estimate drops an incident's edges, and judging weeks of over-dispersed counts as
/// Poisson would raise an incident every few days.
///
/// **Long-run level.** A mostly silent series that bursts now and then has a trailing median of 0, and an hour's mean
/// that is itself noisy; its events per batch (or per decode) over the history, times the bucket's batches (or
/// decodes), is a steadier floor for what it usually sends. When its app sent batches in fewer than
/// ``minLongRunBuckets`` buckets before the window (a window that reaches back to the store's first data), the rate
/// is a ``RunningRate`` instead: everything up to the bucket judged, judged buckets included, but never those of a
/// spike or held ones, so a series' own incident does not raise the floor it is judged against.
///
/// **How unusual.** Every bucket of every series is a test, and with thousands of series × buckets a month a
/// one-in-a-million bucket happens. The budget ``SpikeDetector/Configuration/falseAlarmsPerAppMonth`` is split in
/// half between an app's series across versions and its series × version (all of it to the former without
/// per-version judging), and each half is divided by the number of series in it and the buckets in 30 days
/// (Bonferroni): a bucket opens only when its upper-tail probability is below that. So an app with 40 series on 3
/// versions needs p < 0.05 ÷ (40 × 8,640) ≈ 1.4 × 10⁻⁷ across versions and ≈ 4.8 × 10⁻⁸ in a single version.
struct NoiseModel {
    private var dispersions: [SeriesIdentity: Dispersion] = [:]
    /// Per series, its events per batch and per decode over the buckets before the window.
    private var rates: [SeriesIdentity: RunningRate] = [:]
    private var appPriors: [String: Double] = [:]
    private var acrossSeries: [String: Int] = [:]
    private var versionSeries: [String: Int] = [:]
    private let priorWeight: Double
    private let perVersion: Bool
    private let budget: Double
    private let bucketsPerMonth: Double
    private let recent: BucketIndex
    private let from: Int64
    private let to: Int64
    private let judgedEnd: Int64
    private let bucketSeconds: Int64

    /// A model from the buckets of `recent` in `from..<to` (bucket starts): the history before the judged window,
    /// which ends at `judgedEnd`.
    init(
        recent: BucketIndex, from: Int64, to: Int64, judgedEnd: Int64, bucketSeconds: Int64,
        configuration: SpikeDetector.Configuration
    ) {
        self.recent = recent
        self.from = from
        self.to = to
        self.judgedEnd = judgedEnd
        self.bucketSeconds = bucketSeconds
        priorWeight = configuration.dispersionPriorWeight
        perVersion = configuration.perVersion
        budget = configuration.falseAlarmsPerAppMonth
        bucketsPerMonth = Double(30 * 86_400) / Double(bucketSeconds)
        var pooled: [String: [Dispersion]] = [:]
        for series in recent.counts.keys {
            if series.appVersion == nil {
                acrossSeries[series.appID, default: 0] += 1
                let dispersion = ownDispersion(of: series)
                dispersions[series] = dispersion
                pooled[series.appID, default: []].append(dispersion)
            } else {
                versionSeries[series.appID, default: 0] += 1
            }
        }
        for (app, parts) in pooled { appPriors[app] = Dispersion(pooling: parts).ratio }
        for series in recent.counts.keys { rates[series] = rate(of: series, before: to) }
    }

    /// The series' events per decode over the history times the bucket's decodes, or per batch times its batches;
    /// 0 without traffic to scale by.
    func longRunLevel(of series: SeriesIdentity, at start: Int64) -> Double {
        rates[series]?.level(for: recent.traffic[series.traffic]?[start]) ?? 0
    }

    /// The series' rate over the buckets from the history's start up to `end`.
    private func rate(of series: SeriesIdentity, before end: Int64) -> RunningRate {
        var rate = RunningRate()
        var start = from
        while start < end {
            defer { start += bucketSeconds }
            rate.add(count: recent.counts[series]?[start] ?? 0, traffic: recent.traffic[series.traffic]?[start])
        }
        return rate
    }

    /// The fewest buckets with batches before the window for the series' long-run rate to come from them alone:
    /// about 8 hours of an app's 5-minute buckets, as ``minJudgedPairs`` is for its dispersion.
    static let minLongRunBuckets = 100

    /// A ``RunningRate`` to judge `series` with, started from the buckets before `judgeStart`, or nil when the history
    /// before the window is long enough for ``longRunLevel(of:at:)``.
    func runningRate(of series: SeriesIdentity, before judgeStart: Int64) -> RunningRate? {
        guard (rates[series]?.buckets ?? 0) < Self.minLongRunBuckets else { return nil }
        return rate(of: series, before: min(judgeStart, to))
    }

    /// A series' events per batch (and per decode) over the buckets added so far: its long-run level over the history
    /// before the window, or, where that is too short, kept up to date as the detector walks the window.
    struct RunningRate {
        private var events: Int64 = 0
        private var batches: Int64 = 0
        private var decodes: Int64 = 0
        /// How many buckets with batches were added.
        private(set) var buckets = 0

        /// Adds a bucket's count, if its app (or version) sent batches in it.
        mutating func add(count: Int64, traffic: Traffic?) {
            guard let traffic, traffic.batches > 0 else { return }
            buckets += 1
            events += count
            batches += traffic.batches
            decodes += traffic.decodes
        }

        /// The rate so far times the bucket's decodes (or batches); 0 without traffic to scale by.
        func level(for traffic: Traffic?) -> Double {
            guard let traffic else { return 0 }
            if traffic.decodes > 0, decodes > 0 { return Double(events) / Double(decodes) * Double(traffic.decodes) }
            if traffic.batches > 0, batches > 0 { return Double(events) / Double(batches) * Double(traffic.batches) }
            return 0
        }
    }

    /// The dispersion to judge `series` with: its own history's, shrunk toward its app's.
    func dispersion(of series: SeriesIdentity) -> Double {
        let own = dispersions[series] ?? ownDispersion(of: series)
        return own.ratio(shrunkToward: appPriors[series.appID] ?? 1, priorWeight: priorWeight)
    }

    /// The series' dispersion from the buckets before the window, or, when they hold fewer events than the prior's
    /// weight, from those and the judged ones, if those give at least ``minJudgedPairs`` pairs of active buckets: a
    /// long history inside the window, where the trim drops an incident's edges. A series new in the window (a flood
    /// from nothing, a few buckets long) keeps its app's prior, or its own spike would be its noise.
    private func ownDispersion(of series: SeriesIdentity) -> Dispersion {
        let before = Self.dispersion(of: series, in: recent, from: from, to: to, bucketSeconds: bucketSeconds)
        guard before.levels < priorWeight, judgedEnd > to else { return before }
        let within = Self.dispersion(of: series, in: recent, from: from, to: judgedEnd, bucketSeconds: bucketSeconds)
        return within.pairs >= Self.minJudgedPairs ? within : before
    }

    /// The fewest pairs of active buckets in the judged window that stand in for a missing history: about 8 hours of
    /// a steady series' 5-minute buckets, where the 2% trim drops at least two pairs.
    static let minJudgedPairs = 100

    /// The natural log of the largest upper-tail probability that opens a spike of `series`.
    func logThreshold(for series: SeriesIdentity) -> Double {
        let isVersion = series.appVersion != nil
        let share = perVersion ? 0.5 : 1
        let family = isVersion ? versionSeries[series.appID] ?? 1 : acrossSeries[series.appID] ?? 1
        return log(budget * share / (bucketsPerMonth * Double(max(family, 1))))
    }

    private static func dispersion(
        of series: SeriesIdentity, in recent: BucketIndex, from: Int64, to: Int64, bucketSeconds: Int64
    ) -> Dispersion {
        Dispersion(counts: recent.counts[series], from: from, to: to, bucketSeconds: bucketSeconds) {
            recent.isObserved(series.traffic, at: $0)
        }
    }
}
