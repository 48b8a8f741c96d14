public import FlowmeterModels
public import Rollups

/// Finds spikes per series (appID, kind, widgetType) and per series × app version, in release builds only.
///
/// The window is cut into buckets of ``Configuration/bucketSeconds``. Each bucket is judged against a baseline built
/// from two robust estimates, taking the larger:
/// - **trailing**: the median of the series' previous ``Configuration/trailingBuckets`` buckets, with the spread as
///   1.4826 × MAD (the median absolute deviation, scaled to a standard deviation). The median ignores a minority of
///   outliers, so the spike's own first buckets cannot raise the bar for the rest; flagged buckets are also left out
///   of later buckets' samples.
/// - **seasonal**: the same hour of the week in up to ``Configuration/seasonalWeeks`` earlier weeks, or, when fewer
///   than ``Configuration/minSeasonalSamples`` of those exist, the same hour of the day in up to
///   ``Configuration/seasonalDays`` earlier days (hourly buckets, scaled to the bucket length). This keeps a daily
///   peak from being called a spike.
///
/// Taking the larger makes a spike something sharp against both the recent level and the usual level for that hour:
/// a slow ramp is not one (its trailing median keeps up with it), nor is an evening peak (its seasonal median is
/// high). Only observed buckets are samples: a bucket counts as zero when the app (or the version) sent batches in it
/// and the series had no events, and as missing when nothing was received at all, so a new app version has no fake
/// history of zeros and is not judged until it has ``Configuration/minTrailingSamples`` buckets of its own.
///
/// Where the app sends `decodes`, samples are rates (events per decode) and the expected count is the median rate
/// times the bucket's decodes: more users opening more pages is then no spike, and a version whose adoption ramps up
/// keeps a flat rate. A bucket is flagged when all of these hold:
/// - `count ≥ minEvents` (20): three events are never a spike, whatever the ratio;
/// - `count ≥ minRatio × max(baseline, 1)` (3×): a material rise, not a wobble;
/// - `count − baseline ≥ minDeviations × max(spread, √max(baseline, 1))` (3): beyond both the series' own
///   variability and Poisson noise, which the MAD underestimates for small counts.
///
/// Flagged buckets at most ``Configuration/mergeGapBuckets`` apart form one spike; its onset is the first bucket, its
/// count, baseline and ratio those of the bucket with the most events (the peak).
public struct SpikeDetector: Sendable {
    /// Thresholds and windows, with the defaults described on ``SpikeDetector``.
    public struct Configuration: Sendable, Hashable {
        /// The length of a judged bucket; 5 minutes is long enough to hold twenty events of a real problem and short
        /// enough to catch one within minutes.
        public var bucketSeconds: Int64 = 300
        /// How many earlier buckets the trailing baseline reads (an hour of 5-minute buckets).
        public var trailingBuckets = 12
        /// The fewest observed trailing buckets for the trailing baseline to stand.
        public var minTrailingSamples = 4
        /// How many earlier weeks the hour-of-week baseline reads.
        public var seasonalWeeks = 4
        /// How many earlier days the hour-of-day baseline reads when weeks are missing.
        public var seasonalDays = 7
        /// The fewest observed seasonal hours for a seasonal baseline to stand.
        public var minSeasonalSamples = 3
        /// The fewest events a flagged bucket holds.
        public var minEvents: Int64 = 20
        /// The least ratio of count to baseline (floored at one event) a flagged bucket shows.
        public var minRatio = 3.0
        /// How many spreads above the baseline a flagged bucket lies.
        public var minDeviations = 3.0
        /// Unflagged buckets allowed inside one spike.
        public var mergeGapBuckets = 1
        /// Whether to judge each series × app version too, not only each series across versions.
        public var perVersion = true
        /// How long before the onset a deploy may finish to be suspected on timing alone (`--deploy-window`).
        public var deployWindow: Duration = .seconds(3600)
        /// How far before the window deploys are read, so a release deployed days ago still matches its events.
        public var deployLookback: Duration = .seconds(30 * 86_400)

        /// The documented defaults.
        public init() {}
    }

    /// The thresholds in force.
    public var configuration: Configuration

    /// Creates a detector.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Reads the window [`from`, `to`) and the history before it from `reader`, and reports the spikes, for one
    /// app or (nil) all.
    ///
    /// Reads `trailingBuckets` buckets before the window at bucket resolution, `seasonalWeeks` weeks before it in
    /// hourly buckets, and the minute rollups of each spike for its releases. Throws what the reader throws.
    public func report(reader: some RollupReader, from: Timestamp, to: Timestamp, appID: String? = nil) throws
        -> SpikesReport
    {
        let bucket = configuration.bucketSeconds
        let firstBucket = Self.floor(from.secondsSinceEpoch, to: bucket)
        let recentStart = Timestamp(secondsSinceEpoch: firstBucket - Int64(configuration.trailingBuckets) * bucket)
        let historyDays = max(configuration.seasonalWeeks * 7, configuration.seasonalDays)
        let historyStart = Timestamp(
            secondsSinceEpoch: Self.floor(firstBucket, to: 3600) - Int64(historyDays) * 86_400)
        let end = to

        let recent = BucketIndex(
            series: try reader.seriesBuckets(
                SeriesQuery(from: recentStart, to: end, appID: appID, buildConfiguration: .release),
                bucketSeconds: bucket),
            traffic: try reader.versionBuckets(from: recentStart, to: end, appID: appID, bucketSeconds: bucket),
            perVersion: configuration.perVersion)
        let hourly = BucketIndex(
            series: try reader.seriesBuckets(
                SeriesQuery(from: historyStart, to: end, appID: appID, buildConfiguration: .release),
                bucketSeconds: 3600),
            traffic: try reader.versionBuckets(from: historyStart, to: end, appID: appID, bucketSeconds: 3600),
            perVersion: configuration.perVersion)
        let runs = flaggedRuns(recent: recent, hourly: hourly, firstBucket: firstBucket, end: to.secondsSinceEpoch)

        let lookbackStart = Timestamp(
            secondsSinceEpoch: from.secondsSinceEpoch - configuration.deployLookback.components.seconds)
        let attributor = DeployAttributor(
            deploys: try reader.deploys(from: lookbackStart, to: to), deployWindow: configuration.deployWindow)
        var spikes: [Spike] = []
        for run in runs {
            spikes.append(try spike(for: run, reader: reader, attributor: attributor))
        }
        spikes.sort(by: Self.reportOrder)
        return SpikesReport(
            from: from, to: to, spikes: spikes,
            incidentGapSeconds: Int64(configuration.mergeGapBuckets) * configuration.bucketSeconds)
    }

    // MARK: - Judging buckets

    /// One judged bucket that passed every test.
    struct FlaggedBucket {
        var start: Int64
        var count: Int64
        var baseline: Baseline
        var ratio: Double
    }

    /// Consecutive flagged buckets of one series.
    struct Run {
        var series: SeriesIdentity
        var buckets: [FlaggedBucket]
    }

    /// The expected count for a bucket and how far counts usually stray from it.
    struct Baseline {
        var expected: Double
        var spread: Double
        var isNormalized: Bool
    }

    func flaggedRuns(recent: BucketIndex, hourly: BucketIndex, firstBucket: Int64, end: Int64) -> [Run] {
        let bucket = configuration.bucketSeconds
        let recentStart = firstBucket - Int64(configuration.trailingBuckets) * bucket
        var runs: [Run] = []
        for (series, counts) in recent.counts {
            let judged = counts.contains {
                $0.key >= firstBucket && $0.key < end && $0.value >= configuration.minEvents
            }
            guard judged else { continue }
            var flagged: Set<Int64> = []
            var current: Run?
            var start = firstBucket
            while start < end {
                defer { start += bucket }
                let count = counts[start] ?? 0
                guard count >= configuration.minEvents,
                    let baseline = baseline(
                        for: series, at: start, recent: recent, hourly: hourly, excluding: flagged,
                        recentStart: recentStart)
                else { continue }
                let floored = max(baseline.expected, 1)
                let ratio = Double(count) / floored
                let noise = max(baseline.spread, floored.squareRoot())
                guard ratio >= configuration.minRatio,
                    Double(count) - baseline.expected >= configuration.minDeviations * noise
                else { continue }
                flagged.insert(start)
                let entry = FlaggedBucket(start: start, count: count, baseline: baseline, ratio: ratio)
                let gapLimit = Int64(configuration.mergeGapBuckets + 1) * bucket
                if var run = current, let last = run.buckets.last, start - last.start <= gapLimit {
                    run.buckets.append(entry)
                    current = run
                } else {
                    if let run = current { runs.append(run) }
                    current = Run(series: series, buckets: [entry])
                }
            }
            if let run = current { runs.append(run) }
        }
        return runs
    }

    func baseline(
        for series: SeriesIdentity, at start: Int64, recent: BucketIndex, hourly: BucketIndex,
        excluding flagged: Set<Int64>, recentStart: Int64
    ) -> Baseline? {
        let bucket = configuration.bucketSeconds
        let traffic = series.traffic
        let decodesNow = recent.traffic[traffic]?[start]?.decodes ?? 0

        // The previous `trailingBuckets` unflagged buckets: flagged ones are stepped over (not just dropped), so a
        // long spike keeps being judged against the level before it rather than running out of samples.
        var trailing = Samples()
        var sampleStart = start - bucket
        var slots = 0
        while slots < configuration.trailingBuckets && sampleStart >= recentStart {
            defer { sampleStart -= bucket }
            guard !flagged.contains(sampleStart) else { continue }
            slots += 1
            trailing.add(
                count: recent.counts[series]?[sampleStart] ?? 0, traffic: recent.traffic[traffic]?[sampleStart],
                isObserved: recent.isObserved(traffic, at: sampleStart))
        }

        let hour = Self.floor(start, to: 3600)
        var seasonal = Samples()
        for week in 0..<configuration.seasonalWeeks {
            let sampleHour = hour - Int64(week + 1) * 604_800
            seasonal.add(
                count: hourly.counts[series]?[sampleHour] ?? 0, traffic: hourly.traffic[traffic]?[sampleHour],
                isObserved: hourly.isObserved(traffic, at: sampleHour))
        }
        if seasonal.raw.count < configuration.minSeasonalSamples {
            seasonal = Samples()
            for day in 0..<configuration.seasonalDays {
                let sampleHour = hour - Int64(day + 1) * 86_400
                seasonal.add(
                    count: hourly.counts[series]?[sampleHour] ?? 0, traffic: hourly.traffic[traffic]?[sampleHour],
                    isObserved: hourly.isObserved(traffic, at: sampleHour))
            }
        }

        let normalized =
            decodesNow > 0
            && (trailing.rates.count >= configuration.minTrailingSamples
                || seasonal.rates.count >= configuration.minSeasonalSamples)
        var estimates: [(median: Double, spread: Double)] = []
        if normalized {
            let scale = Double(decodesNow)
            if trailing.rates.count >= configuration.minTrailingSamples,
                let estimate = RobustStatistics.medianAndSpread(trailing.rates)
            {
                estimates.append((estimate.median * scale, estimate.spread * scale))
            }
            if seasonal.rates.count >= configuration.minSeasonalSamples,
                let estimate = RobustStatistics.medianAndSpread(seasonal.rates)
            {
                estimates.append((estimate.median * scale, estimate.spread * scale))
            }
        } else {
            if trailing.raw.count >= configuration.minTrailingSamples,
                let estimate = RobustStatistics.medianAndSpread(trailing.raw)
            {
                estimates.append(estimate)
            }
            // Hourly counts scaled to the bucket: an hour of 120 events expects 10 in a 5-minute bucket.
            let scale = Double(bucket) / 3600
            if seasonal.raw.count >= configuration.minSeasonalSamples,
                let estimate = RobustStatistics.medianAndSpread(seasonal.raw)
            {
                estimates.append((estimate.median * scale, estimate.spread * scale))
            }
        }
        guard let expected = estimates.map(\.median).max(), let spread = estimates.map(\.spread).max() else {
            return nil
        }
        return Baseline(expected: expected, spread: spread, isNormalized: normalized)
    }

    /// Observed samples of one series: raw counts, and rates per decode where the traffic carries decodes.
    struct Samples {
        var raw: [Double] = []
        var rates: [Double] = []

        /// Adds a bucket's count; `isObserved` says the app (or version) was live in it (batches or other events).
        mutating func add(count: Int64, traffic: Traffic?, isObserved: Bool) {
            // A bucket in which nothing at all came from the app is missing, not zero: a new app or version has no
            // history. One in which the app was live and this series silent is a real zero.
            guard count > 0 || isObserved else { return }
            raw.append(Double(count))
            if let decodes = traffic?.decodes, decodes > 0 { rates.append(Double(count) / Double(decodes)) }
        }
    }

    // MARK: - Releases and deploys

    private func spike(for run: Run, reader: some RollupReader, attributor: DeployAttributor) throws -> Spike {
        let bucket = configuration.bucketSeconds
        let first = run.buckets[0]
        let last = run.buckets[run.buckets.count - 1]
        let peak = run.buckets.max { $0.count != $1.count ? $0.count < $1.count : $0.start > $1.start }!
        let series = run.series
        let rollups = try reader.seriesRollups(
            SeriesQuery(
                from: Timestamp(secondsSinceEpoch: first.start), to: Timestamp(secondsSinceEpoch: last.start + bucket),
                appID: series.appID, kinds: [series.kind], widgetTypes: [series.widgetType],
                buildConfiguration: .release, appVersion: series.appVersion))
        var releases: [String: Int64] = [:]
        var onsetReleases: [String: Int64] = [:]
        var pages: Set<String> = []
        for rollup in rollups {
            releases.merge(rollup.releases, uniquingKeysWith: +)
            for sample in rollup.samples { if let page = sample.pageID { pages.insert(page) } }
            if rollup.window.start < first.start + bucket {
                onsetReleases.merge(rollup.releases, uniquingKeysWith: +)
            }
        }
        let onset = Timestamp(secondsSinceEpoch: first.start)
        return Spike(
            appID: series.appID, kind: series.kind, widgetType: series.widgetType, appVersion: series.appVersion,
            onset: onset, peakWindowStart: Timestamp(secondsSinceEpoch: peak.start),
            end: Timestamp(secondsSinceEpoch: last.start + bucket), count: peak.count,
            baseline: Self.rounded(peak.baseline.expected), ratio: Self.rounded(peak.ratio),
            isNormalized: peak.baseline.isNormalized,
            suspectDeploy: attributor.suspect(firstSeen: onset, earliestReleases: onsetReleases),
            backendReleases: releases.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map(\.key), pages: pages.sorted())
    }

    private static func reportOrder(_ a: Spike, _ b: Spike) -> Bool {
        if a.onset != b.onset { return a.onset < b.onset }
        if a.appID != b.appID { return a.appID < b.appID }
        if a.kind.rawValue != b.kind.rawValue { return a.kind.rawValue < b.kind.rawValue }
        if a.widgetType != b.widgetType { return a.widgetType < b.widgetType }
        switch (a.appVersion, b.appVersion) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case (let left?, let right?): return VersionOrder.less(left, right)
        }
    }

    static func floor(_ value: Int64, to multiple: Int64) -> Int64 {
        let quotient = value / multiple
        return (value % multiple < 0 ? quotient - 1 : quotient) * multiple
    }

    // Two decimals are what a reader compares; the full double would print noise like 3.3333333333333335.
    static func rounded(_ value: Double) -> Double {
        (value * 100).rounded() / 100
    }
}
