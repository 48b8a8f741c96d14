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
/// decodes), is a steadier floor for what it usually sends.
///
/// **How unusual.** Every bucket of every series is a test, and with thousands of series × buckets a month a
/// one-in-a-million bucket happens. The budget ``SpikeDetector/Configuration/falseAlarmsPerAppMonth`` is split in
/// half between an app's series across versions and its series × version (all of it to the former without
/// per-version judging), and each half is divided by the number of series in it and the buckets in 30 days
/// (Bonferroni): a bucket opens only when its upper-tail probability is below that. So an app with 40 series on 3
/// versions needs p < 0.05 ÷ (40 × 8,640) ≈ 1.4 × 10⁻⁷ across versions and ≈ 4.8 × 10⁻⁸ in a single version.
struct NoiseModel {
    private var dispersions: [SeriesIdentity: Dispersion] = [:]
    private var rates: [SeriesIdentity: (perBatch: Double?, perDecode: Double?)] = [:]
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
        for (series, counts) in recent.counts {
            var events: Int64 = 0
            var batches: Int64 = 0
            var decodes: Int64 = 0
            var start = from
            while start < to {
                defer { start += bucketSeconds }
                guard let traffic = recent.traffic[series.traffic]?[start], traffic.batches > 0 else { continue }
                events += counts[start] ?? 0
                batches += traffic.batches
                decodes += traffic.decodes
            }
            rates[series] = (
                batches > 0 ? Double(events) / Double(batches) : nil,
                decodes > 0 ? Double(events) / Double(decodes) : nil
            )
        }
    }

    /// The series' events per decode over the history times the bucket's decodes, or per batch times its batches;
    /// 0 without traffic to scale by.
    func longRunLevel(of series: SeriesIdentity, at start: Int64) -> Double {
        guard let traffic = recent.traffic[series.traffic]?[start], let rate = rates[series] else { return 0 }
        if traffic.decodes > 0, let perDecode = rate.perDecode { return perDecode * Double(traffic.decodes) }
        if traffic.batches > 0, let perBatch = rate.perBatch { return perBatch * Double(traffic.batches) }
        return 0
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
