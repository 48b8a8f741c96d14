public import FlowmeterModels
import Foundation
public import Rollups

/// Finds spikes per series (appID, kind, widgetType) and per series × app version, in release builds only, and
/// keeps each one open, with hysteresis, for as long as its level stays above where it started.
///
/// The window is cut into buckets of ``Configuration/bucketSeconds``. Each bucket is judged against a baseline built
/// from two robust estimates, taking the larger:
/// - **trailing**: the median of the series' previous ``Configuration/trailingBuckets`` buckets, with the spread as
///   1.4826 × MAD (the median absolute deviation, scaled to a standard deviation). Buckets of a spike are stepped
///   over, so a flood never becomes its own baseline; so are buckets clearly unusual (upper tail below
///   ``Configuration/continueSignificance``) but too small by every floor to open one (a night flood's first
///   buckets, from one install of the few awake), which become the onset of a spike that opens right after them.
/// - **seasonal**: the same hour of the week in up to ``Configuration/seasonalWeeks`` earlier weeks, or, when fewer
///   than ``Configuration/minSeasonalSamples`` of those exist, the same hour of the day in up to
///   ``Configuration/seasonalDays`` earlier days (hourly buckets, scaled to the bucket length). This keeps a daily
///   peak from being called a spike.
///
/// Only observed buckets are samples: a bucket counts as zero when the app (or the version) sent batches in it or
/// reported other events, and as missing when nothing was received at all. Where the app sends `decodes`, samples
/// are rates (events per decode) and the expected count is the median rate times the bucket's decodes.
///
/// **Noise.** Counts of pre-aggregated events are over-dispersed, so a bucket is judged by how unusual it is for its
/// own series: the dispersion φ (variance ÷ mean) is estimated from the series' history before the window
/// (``Dispersion``, shrunk toward its app's for thin series), and the bucket's upper-tail probability under a
/// quasi-Poisson count of that mean and dispersion (``QuasiPoisson``) must be below the series' share of a budget of
/// ``Configuration/falseAlarmsPerAppMonth`` false alarms per app and month: half for the series across versions,
/// half for the single versions, each divided by its number of series and a month of buckets (Bonferroni), so a
/// single version needs stronger evidence than the app as a whole.
///
/// **Opening.** A spike opens at a bucket that is that unusual, at least ``Configuration/minRatio`` times its
/// baseline (floored at one event) and ``Configuration/minDeviations`` MAD spreads above it, and big enough by one of:
/// - its count: at least ``Configuration/minEvents``;
/// - its reach: at least ``Configuration/minShareEvents`` events from ``Configuration/minInstalls`` installs or more,
///   who are at least ``Configuration/minInstallShare`` of the app's (or version's) installs active in the last hour,
///   so half of a small app's users hit is a spike (at night too) where ten extra events in a huge app are not;
/// - a new release: from a silent series (baseline and trailing hour all zero), at least
///   ``Configuration/newReleaseMinEvents`` events from ``Configuration/minInstalls`` installs, every one carrying one
///   backend release the app never sent before (a canary, a small app's first broken deploy).
///
/// **Staying open.** The baseline at the onset is frozen (its rate, where normalized). A later bucket continues the
/// spike while it stays clearly above it (and above that hour's seasonal level): ``Configuration/continueRatio``
/// times and unusual at ``Configuration/continueSignificance``. The spike closes after more than
/// ``Configuration/mergeGapBuckets`` buckets in a row that do not continue it, so a flood that dips for a few buckets
/// stays one spike, with its onset's releases and deploy. The detector starts judging
/// ``Configuration/warmupBuckets`` before the window so a spike that began earlier is still judged against the level
/// before it (its onset may then lie before the window).
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
        /// The fewest events that open a spike on their count alone (`--min-events`).
        public var minEvents: Int64 = 20
        /// The least ratio of count to baseline (floored at one event) an opening bucket shows (`--min-ratio`).
        public var minRatio = 3.0
        /// How many MAD spreads above the baseline an opening bucket lies.
        public var minDeviations = 3.0
        /// The false alarms per app and 30 days the opening test allows under the noise model, before the absolute
        /// floors and the ratio cut them further.
        public var falseAlarmsPerAppMonth = 0.1
        /// The least expected count the noise model assumes, so a series of zeros is not certain to stay silent.
        public var minExpected = 0.1
        /// How many events' worth of its app's dispersion a series' own estimate is blended with.
        public var dispersionPriorWeight = 50.0
        /// The fewest events that open a spike on its reach among the app's installs.
        public var minShareEvents: Int64 = 5
        /// The fewest distinct installs of a bucket that opens a spike on reach or on a new release.
        public var minInstalls = 2
        /// The least share of the app's (or version's) installs active in the last hour that opens a spike on reach.
        public var minInstallShare = 0.05
        /// The fewest events of a silent series, all carrying one never-seen release, that open a spike.
        public var newReleaseMinEvents: Int64 = 8
        /// How unusual (upper-tail probability) a bucket must be against the frozen baseline to keep a spike open.
        public var continueSignificance = 0.001
        /// The least ratio of count to the frozen baseline (floored at one event) that keeps a spike open.
        public var continueRatio = 1.5
        /// Buckets in a row that may fail to continue a spike before it closes (the quiet stretch is one more); the
        /// same tolerance groups spikes into incidents and keeps an incident ongoing.
        public var mergeGapBuckets = 5
        /// Buckets judged before the window, so a spike that began before it keeps its onset and baseline.
        public var warmupBuckets = 288
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

    /// Reads the window [`from`, `to`) and the history before it from `reader`, and reports the spikes that overlap
    /// the window, for one app or (nil) all.
    ///
    /// Reads ``Configuration/warmupBuckets`` plus ``Configuration/trailingBuckets`` buckets before the window at
    /// bucket resolution, ``Configuration/seasonalWeeks`` weeks before that in hourly buckets, and, for the few
    /// buckets that need them, minute rollups (installs and releases) and the version rollups of the day before.
    /// Throws what the reader throws.
    public func report(reader: some RollupReader, from: Timestamp, to: Timestamp, appID: String? = nil) throws
        -> SpikesReport
    {
        let bucket = configuration.bucketSeconds
        let firstBucket = Self.floor(from.secondsSinceEpoch, to: bucket)
        let judgeStart = firstBucket - Int64(configuration.warmupBuckets) * bucket
        let recentStart = judgeStart - Int64(configuration.trailingBuckets) * bucket
        let historyDays = max(configuration.seasonalWeeks * 7, configuration.seasonalDays)
        let historyStart = Timestamp(
            secondsSinceEpoch: Self.floor(judgeStart, to: 3600) - Int64(historyDays) * 86_400)
        let end = to
        let recentFrom = Timestamp(secondsSinceEpoch: recentStart)

        let recent = BucketIndex(
            series: try reader.seriesBuckets(
                SeriesQuery(from: recentFrom, to: end, appID: appID, buildConfiguration: .release),
                bucketSeconds: bucket),
            traffic: try reader.versionBuckets(from: recentFrom, to: end, appID: appID, bucketSeconds: bucket),
            perVersion: configuration.perVersion)
        let hourly = BucketIndex(
            series: try reader.seriesBuckets(
                SeriesQuery(from: historyStart, to: end, appID: appID, buildConfiguration: .release),
                bucketSeconds: 3600),
            traffic: try reader.versionBuckets(from: historyStart, to: end, appID: appID, bucketSeconds: 3600),
            perVersion: configuration.perVersion)
        let evidence = BucketEvidence(
            reader: reader, bucketSeconds: bucket, historyStart: recentStart, end: to.secondsSinceEpoch)
        let runs = try flaggedRuns(
            recent: recent, hourly: hourly, evidence: evidence, judgeStart: judgeStart, firstBucket: firstBucket,
            end: to.secondsSinceEpoch)

        let lookbackStart = Timestamp(
            secondsSinceEpoch: min(from.secondsSinceEpoch, judgeStart) - configuration.deployLookback.components.seconds
        )
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

    /// One bucket of a spike: the one that opened it, or one that kept it open.
    struct FlaggedBucket {
        var start: Int64
        var count: Int64
        /// The baseline it was judged against (the frozen onset baseline, or that hour's seasonal level if higher).
        var expected: Double
        var ratio: Double
        var isNormalized: Bool
    }

    /// The flagged buckets of one series' spike, from its opening bucket on.
    struct Run {
        var series: SeriesIdentity
        var opening: Spike.Opening
        var buckets: [FlaggedBucket]
        /// The index in `buckets` of the bucket that opened it (after the held buckets that became its onset).
        var openingIndex = 0
    }

    /// The expected count for a bucket and how far counts usually stray from it.
    struct Baseline {
        var expected: Double
        var spread: Double
        var isNormalized: Bool
        /// The mean of the trailing samples (scaled like `expected`): a series that is mostly silent but bursty has
        /// a median of 0 and a mean that says it is not.
        var trailingMean: Double
        /// The bucket's decodes, where `expected` is a rate times them.
        var decodes: Int64
    }

    /// A spike being followed: its baseline frozen at the onset.
    private struct OpenRun {
        var run: Run
        /// The level the noise test used at the onset, and that level per decode where normalized.
        var level: Double
        var levelPerDecode: Double?
        var expected: Double
        var expectedPerDecode: Double?
    }

    func flaggedRuns(
        recent: BucketIndex, hourly: BucketIndex, evidence: BucketEvidence, judgeStart: Int64, firstBucket: Int64,
        end: Int64
    ) throws -> [Run] {
        let bucket = configuration.bucketSeconds
        let recentStart = judgeStart - Int64(configuration.trailingBuckets) * bucket
        let noise = NoiseModel(
            recent: recent, from: recentStart, to: firstBucket, judgedEnd: end, bucketSeconds: bucket,
            configuration: configuration)
        let gapLimit = Int64(configuration.mergeGapBuckets + 1) * bucket
        let openingFloor = min(configuration.minEvents, configuration.minShareEvents, configuration.newReleaseMinEvents)
        var runs: [Run] = []
        for (series, counts) in recent.counts {
            let judged = counts.contains { $0.key >= firstBucket && $0.key < end && $0.value >= 2 }
            guard judged else { continue }
            let dispersion = noise.dispersion(of: series)
            var flagged: Set<Int64> = []
            // The held buckets just before this one, in a row: the onset of the spike they may turn into.
            var held: [FlaggedBucket] = []
            var open: OpenRun?
            var running = noise.runningRate(of: series, before: judgeStart)
            var start = judgeStart
            while start < end {
                defer {
                    // Whatever this bucket turned out to be: a spike's or held buckets stay out of the running rate.
                    if !flagged.contains(start) {
                        running?.add(count: counts[start] ?? 0, traffic: recent.traffic[series.traffic]?[start])
                    }
                    start += bucket
                }
                let count = counts[start] ?? 0
                if let current = open, let last = current.run.buckets.last, start - last.start > gapLimit {
                    if last.start >= firstBucket { runs.append(current.run) }
                    open = nil
                }
                if var current = open {
                    if let entry = continuation(
                        of: current, count: count, at: start, series: series, hourly: hourly, recent: recent,
                        dispersion: dispersion)
                    {
                        current.run.buckets.append(entry)
                        flagged.insert(start)
                        open = current
                    }
                    continue
                }
                guard count >= max(openingFloor, 1),
                    let baseline = baseline(
                        for: series, at: start, recent: recent, hourly: hourly, excluding: flagged,
                        recentStart: recentStart)
                else {
                    held = []
                    continue
                }
                let longRun =
                    running?.level(for: recent.traffic[series.traffic]?[start])
                    ?? noise.longRunLevel(of: series, at: start)
                let level = max(baseline.expected, baseline.trailingMean, longRun, configuration.minExpected)
                let logThreshold = noise.logThreshold(for: series)
                guard
                    let opening = try opening(
                        series: series, count: count, at: start, baseline: baseline, level: level,
                        isFromNothing: baseline.expected == 0 && baseline.trailingMean == 0 && longRun == 0,
                        dispersion: dispersion, logThreshold: logThreshold, evidence: evidence)
                else {
                    // Clearly unusual but too small by every floor (the first buckets of a night flood, from one
                    // install of the few awake, or a canary's first events): held out of the baseline like a
                    // flagged bucket, so what follows is judged against the level before it, never against its
                    // own start; if a spike opens right after, these buckets are its onset.
                    if isUnusual(count: count, baseline: baseline),
                        QuasiPoisson.logUpperTail(count: Double(count), expected: level, dispersion: dispersion)
                            <= log(configuration.continueSignificance)
                    {
                        flagged.insert(start)
                        held.append(
                            FlaggedBucket(
                                start: start, count: count, expected: baseline.expected,
                                ratio: Double(count) / max(baseline.expected, 1), isNormalized: baseline.isNormalized))
                    } else {
                        held = []
                    }
                    continue
                }
                flagged.insert(start)
                let ratio = Double(count) / max(baseline.expected, 1)
                let perDecode: (Double) -> Double? = { value in
                    baseline.isNormalized && baseline.decodes > 0 ? value / Double(baseline.decodes) : nil
                }
                open = OpenRun(
                    run: Run(
                        series: series, opening: opening,
                        buckets: held + [
                            FlaggedBucket(
                                start: start, count: count, expected: baseline.expected, ratio: ratio,
                                isNormalized: baseline.isNormalized)
                        ], openingIndex: held.count),
                    level: level, levelPerDecode: perDecode(level), expected: baseline.expected,
                    expectedPerDecode: perDecode(baseline.expected))
                held = []
            }
            if let current = open, let last = current.run.buckets.last, last.start >= firstBucket {
                runs.append(current.run)
            }
        }
        return runs
    }

    /// Why the bucket at `start` opens a spike, or nil when it does not.
    private func opening(
        series: SeriesIdentity, count: Int64, at start: Int64, baseline: Baseline, level: Double, isFromNothing: Bool,
        dispersion: Double, logThreshold: Double, evidence: BucketEvidence
    ) throws -> Spike.Opening? {
        let value = Double(count)
        guard isUnusual(count: count, baseline: baseline) else { return nil }
        let logTail = QuasiPoisson.logUpperTail(count: value, expected: level, dispersion: dispersion)
        if logTail <= logThreshold {
            if count >= configuration.minEvents { return .eventCount }
            if count >= configuration.minShareEvents {
                let detail = try evidence.detail(series, at: start)
                if detail.installs >= configuration.minInstalls {
                    let installs = try evidence.installs(of: series.traffic, at: start)
                    if Double(detail.installs) >= configuration.minInstallShare * Double(installs) {
                        return .installShare
                    }
                }
            }
        }
        // From nothing, every event carrying one release the app never sent before: a canary or a small app's
        // broken deploy, strong evidence at a count the floors would wait for.
        guard isFromNothing, count >= configuration.newReleaseMinEvents,
            logTail <= log(configuration.continueSignificance)
        else { return nil }
        let detail = try evidence.detail(series, at: start)
        guard detail.installs >= configuration.minInstalls, detail.releases.count == 1,
            let (release, carried) = detail.releases.first, carried >= detail.events,
            try !evidence.appSent(release, appID: series.appID, before: start)
        else { return nil }
        return .newRelease
    }

    /// Whether `count` is far enough above `baseline` to be judged at all: ``Configuration/minRatio`` times it
    /// (floored at one event) and ``Configuration/minDeviations`` spreads above it.
    private func isUnusual(count: Int64, baseline: Baseline) -> Bool {
        let value = Double(count)
        return value >= configuration.minRatio * max(baseline.expected, 1)
            && value - baseline.expected >= configuration.minDeviations * baseline.spread
    }

    /// The bucket at `start` as part of the open spike `run`, or nil when it is not clearly above the spike's
    /// frozen baseline (and that hour's seasonal level).
    private func continuation(
        of run: OpenRun, count: Int64, at start: Int64, series: SeriesIdentity, hourly: BucketIndex,
        recent: BucketIndex, dispersion: Double
    ) -> FlaggedBucket? {
        guard count >= 2 else { return nil }
        let decodes = recent.traffic[series.traffic]?[start]?.decodes ?? 0
        var expected = run.expected
        var level = run.level
        if decodes > 0, let perDecode = run.expectedPerDecode, let levelPerDecode = run.levelPerDecode {
            expected = perDecode * Double(decodes)
            level = max(levelPerDecode * Double(decodes), configuration.minExpected)
        }
        if let seasonal = seasonal(for: series, at: start, hourly: hourly, decodes: decodes) {
            expected = max(expected, seasonal.median)
            level = max(level, seasonal.median)
        }
        let value = Double(count)
        guard value >= configuration.continueRatio * max(expected, 1),
            QuasiPoisson.logUpperTail(count: value, expected: level, dispersion: dispersion)
                <= log(configuration.continueSignificance)
        else { return nil }
        return FlaggedBucket(
            start: start, count: count, expected: expected, ratio: value / max(expected, 1),
            isNormalized: run.run.buckets[0].isNormalized)
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
        let seasonal = seasonalSamples(for: series, at: start, hourly: hourly)

        let normalized =
            decodesNow > 0
            && (trailing.rates.count >= configuration.minTrailingSamples
                || seasonal.rates.count >= configuration.minSeasonalSamples)
        var estimates: [(median: Double, spread: Double)] = []
        var trailingMean = 0.0
        if normalized {
            let scale = Double(decodesNow)
            if trailing.rates.count >= configuration.minTrailingSamples,
                let estimate = RobustStatistics.medianAndSpread(trailing.rates)
            {
                estimates.append((estimate.median * scale, estimate.spread * scale))
                trailingMean = trailing.rates.reduce(0, +) / Double(trailing.rates.count) * scale
            }
        } else if trailing.raw.count >= configuration.minTrailingSamples,
            let estimate = RobustStatistics.medianAndSpread(trailing.raw)
        {
            estimates.append(estimate)
            trailingMean = trailing.raw.reduce(0, +) / Double(trailing.raw.count)
        }
        if let estimate = seasonalEstimate(seasonal, normalized: normalized, decodes: decodesNow) {
            estimates.append(estimate)
        }
        guard let expected = estimates.map(\.median).max(), let spread = estimates.map(\.spread).max() else {
            return nil
        }
        return Baseline(
            expected: expected, spread: spread, isNormalized: normalized, trailingMean: trailingMean,
            decodes: decodesNow)
    }

    /// The same hour in earlier weeks, or in earlier days when weeks are missing.
    private func seasonalSamples(for series: SeriesIdentity, at start: Int64, hourly: BucketIndex) -> Samples {
        let traffic = series.traffic
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
        return seasonal
    }

    /// The seasonal median and spread for one bucket: rates times `decodes` when normalized, else hourly counts
    /// scaled to the bucket (an hour of 120 events expects 10 in a 5-minute bucket); nil without enough samples.
    private func seasonalEstimate(_ seasonal: Samples, normalized: Bool, decodes: Int64) -> (
        median: Double, spread: Double
    )? {
        if normalized {
            guard seasonal.rates.count >= configuration.minSeasonalSamples,
                let estimate = RobustStatistics.medianAndSpread(seasonal.rates)
            else { return nil }
            return (estimate.median * Double(decodes), estimate.spread * Double(decodes))
        }
        guard seasonal.raw.count >= configuration.minSeasonalSamples,
            let estimate = RobustStatistics.medianAndSpread(seasonal.raw)
        else { return nil }
        let scale = Double(configuration.bucketSeconds) / 3600
        return (estimate.median * scale, estimate.spread * scale)
    }

    /// That hour's seasonal level for the bucket at `start`, normalized when the bucket has decodes and the samples
    /// have rates.
    private func seasonal(for series: SeriesIdentity, at start: Int64, hourly: BucketIndex, decodes: Int64) -> (
        median: Double, spread: Double
    )? {
        let samples = seasonalSamples(for: series, at: start, hourly: hourly)
        if decodes > 0, let estimate = seasonalEstimate(samples, normalized: true, decodes: decodes) {
            return estimate
        }
        return seasonalEstimate(samples, normalized: false, decodes: 0)
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
        // Two releases of one service drew it: compare them over the spike (all the app's diagnostics there), and
        // blame the one that raises it where its sibling does not, before the releases of the onset's events.
        var blamed: String?
        let byService = Dictionary(grouping: releases.keys, by: CanaryComparison.service(of:))
        if byService.values.contains(where: { $0.count >= 2 }) {
            let appRollups = try reader.seriesRollups(
                SeriesQuery(
                    from: Timestamp(secondsSinceEpoch: first.start),
                    to: Timestamp(secondsSinceEpoch: last.start + bucket), appID: series.appID,
                    buildConfiguration: .release))
            blamed = CanaryComparison(rollups: appRollups).blamed(
                appID: series.appID, kind: series.kind, widgetType: series.widgetType, among: releases.keys,
                appVersion: series.appVersion)
        }
        return Spike(
            appID: series.appID, kind: series.kind, widgetType: series.widgetType, appVersion: series.appVersion,
            onset: onset, peakWindowStart: Timestamp(secondsSinceEpoch: peak.start),
            end: Timestamp(secondsSinceEpoch: last.start + bucket), count: peak.count,
            baseline: Self.rounded(peak.expected), ratio: Self.rounded(peak.ratio),
            isNormalized: peak.isNormalized, opening: run.opening,
            suspectDeploy: attributor.suspect(firstSeen: onset, earliestReleases: onsetReleases, blamed: blamed),
            backendReleases: releases.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map(\.key), pages: pages.sorted(),
            openedAt: Timestamp(secondsSinceEpoch: run.buckets[run.openingIndex].start))
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
