public import FlowmeterModels
public import Rollups

/// Finds the version gates a backend needs (types only some live versions render) and forecasts when each can be
/// dropped (`flowmeter gates`, docs/detector.md).
///
/// Per app, over release builds:
/// 1. Live versions: those that sent a batch in the window's last day ("today").
/// 2. What each renders: ``RenderedTypes``, from the version's capability manifest where it has one, else from the
///    capabilities it sends. Live versions neither says anything about are left out of the question, not counted as
///    rendering nothing.
/// 3. A type some live versions render and some do not needs a gate at the lowest rendering version above every
///    version that does not render it; a type that a newer version dropped has no minimum-version gate and is left
///    out.
/// 4. The below share of a stretch of time: distinct installs on versions under the gate over all distinct installs
///    (HyperLogLog unions, platforms merged). `belowShare` is today's; `trend` one per week of the window, ending at
///    `to`.
/// 5. The forecast (``GateForecast``): a logistic fit to the daily below shares of the window, dated where it
///    crosses ``Configuration/threshold``, when there are enough days for a fit.
///
/// Reads the window's version rollups one day at a time, so memory holds one sketch per version per day.
public struct GateFinder: Sendable {
    /// Thresholds and windows, with the defaults described on ``GateFinder``.
    public struct Configuration: Sendable, Hashable {
        /// The below share under which a gate can be dropped (`--threshold`, 1%): the few installs left see a
        /// placeholder or nothing, as they would for any type they predate.
        public var threshold = 0.01
        /// The fewest days with traffic a forecast needs: a week, so weekday and weekend habits both count.
        public var minForecastDays = 7
        /// The shortest span, first day to last, of those days.
        public var minForecastSpan: Duration = .seconds(6 * 86_400)
        /// How far ahead a forecast may reach; a later crossing is `beyondHorizon`.
        public var horizon: Duration = .seconds(365 * 86_400)

        /// The documented defaults.
        public init() {}
    }

    /// The thresholds in force.
    public var configuration: Configuration

    /// Creates a finder.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Reads [`from`, `to`) from `reader` and reports the gates, for one app or (nil) all. What each version renders
    /// comes from its capability manifest where it uploaded one (the reader's ``ManifestIndex``, or `renderedTypes`
    /// when given), else from the capabilities in its rollups.
    ///
    /// Throws what the reader throws.
    public func report(
        reader: some RollupReader, from: Timestamp, to: Timestamp, appID: String? = nil,
        renderedTypes: RenderedTypes? = nil
    ) throws -> GatesReport {
        var days: [Day] = []
        var capabilities = RenderedTypes()
        var end = to.secondsSinceEpoch
        while end > from.secondsSinceEpoch {
            let start = max(from.secondsSinceEpoch, end - 86_400)
            let rollups = try reader.versionRollups(
                from: Timestamp(secondsSinceEpoch: start), to: Timestamp(secondsSinceEpoch: end), appID: appID
            ).filter { $0.key.buildConfiguration == .release }
            days.append(Day(start: start, end: end, rollups: rollups))
            capabilities = capabilities.merging(preferring: RenderedTypes(versionRollups: rollups))
            end = start
        }
        days.reverse()
        let manifests = try renderedTypes ?? ManifestIndex.load(reader: reader, appID: appID).renderedTypes
        let rendered = capabilities.merging(preferring: manifests)
        return report(from: from, to: to, days: days, rendered: rendered)
    }

    /// One day's (or the window's first, shorter stretch's) installs per app version.
    struct Day {
        var start: Int64
        var end: Int64
        /// Per app, per version: the installs that sent a batch.
        var installs: [String: [String: HyperLogLog]] = [:]

        init(start: Int64, end: Int64, rollups: [VersionRollup]) {
            self.start = start
            self.end = end
            for rollup in rollups where rollup.batches > 0 {
                installs[rollup.key.appID, default: [:]][rollup.key.appVersion, default: HyperLogLog()].merge(
                    rollup.installs)
            }
        }

        /// Installs below `gate` and all installs of `app` that day.
        func share(app: String, below gate: String) -> (share: Double, installs: Int64)? {
            guard let versions = installs[app], !versions.isEmpty else { return nil }
            var below = HyperLogLog()
            var all = HyperLogLog()
            for (version, sketch) in versions {
                all.merge(sketch)
                if AppVersion(version) < AppVersion(gate) { below.merge(sketch) }
            }
            let total = all.count
            guard total > 0 else { return nil }
            return (min(1, Double(below.count) / Double(total)), total)
        }
    }

    func report(from: Timestamp, to: Timestamp, days: [Day], rendered: RenderedTypes) -> GatesReport {
        guard let today = days.last else { return GatesReport(from: from, to: to, gates: []) }
        var gates: [DroppableGate] = []
        for (app, versions) in today.installs {
            let known = rendered.types[app] ?? [:]
            let live = versions.keys.filter { known[$0] != nil }
            let types = Set(live.flatMap { known[$0] ?? [] })
            for type in types {
                let rendering = live.filter { known[$0]?.contains(type) == true }.sorted(by: VersionOrder.less)
                let missing = live.filter { known[$0]?.contains(type) != true }.sorted(by: VersionOrder.less)
                guard let newestMissing = missing.last,
                    let gate = rendering.first(where: { AppVersion($0) > AppVersion(newestMissing) }),
                    let current = today.share(app: app, below: gate)
                else { continue }
                gates.append(
                    DroppableGate(
                        appID: app, widgetType: type, minAppVersion: gate, belowShare: Self.rounded(current.share),
                        trend: trend(app: app, gate: gate, days: days, to: to.secondsSinceEpoch),
                        forecast: forecast(app: app, gate: gate, days: days, current: current.share, now: to),
                        renderingVersions: rendering, missingVersions: missing))
            }
        }
        gates.sort {
            switch ($0.forecast.date, $1.forecast.date) {
            case (let a?, let b?) where a != b: return a < b
            case (.some, nil): return true
            case (nil, .some): return false
            default: break
            }
            if $0.appID != $1.appID { return $0.appID < $1.appID }
            return $0.widgetType < $1.widgetType
        }
        return GatesReport(from: from, to: to, gates: gates)
    }

    /// The below share per week ending at `to` (the first week may be shorter), oldest first.
    private func trend(app: String, gate: String, days: [Day], to: Int64) -> [GateTrendPoint] {
        var points: [GateTrendPoint] = []
        var weekEnd = to
        var remaining = days[...]
        while let first = remaining.first, weekEnd > first.start {
            let weekStart = weekEnd - 7 * 86_400
            let week = remaining.filter { $0.start >= weekStart && $0.end <= weekEnd }
            var below = HyperLogLog()
            var all = HyperLogLog()
            for day in week {
                for (version, sketch) in day.installs[app] ?? [:] {
                    all.merge(sketch)
                    if AppVersion(version) < AppVersion(gate) { below.merge(sketch) }
                }
            }
            if all.count > 0 {
                points.append(
                    GateTrendPoint(
                        from: Timestamp(secondsSinceEpoch: max(weekStart, first.start)),
                        to: Timestamp(secondsSinceEpoch: weekEnd),
                        belowShare: Self.rounded(min(1, Double(below.count) / Double(all.count)))))
            }
            remaining = remaining.filter { $0.end <= weekStart }[...]
            weekEnd = weekStart
        }
        return points.reversed()
    }

    private func forecast(app: String, gate: String, days: [Day], current: Double, now: Timestamp) -> GateForecast {
        let points = days.compactMap { day -> GateForecast.Point? in
            guard let share = day.share(app: app, below: gate) else { return nil }
            return GateForecast.Point(at: (day.start + day.end) / 2, share: share.share, installs: share.installs)
        }
        return GateForecast.fit(
            points: points, current: current, threshold: configuration.threshold, now: now,
            minPoints: configuration.minForecastDays, minSpanSeconds: configuration.minForecastSpan.components.seconds,
            horizonSeconds: configuration.horizon.components.seconds)
    }

    static func rounded(_ share: Double) -> Double { (share * 10_000).rounded() / 10_000 }
}
