public import FlowmeterModels
public import Rollups

/// Finds widget types that release builds cannot render (docs/api.md#query-output, `flowmeter ungated`).
///
/// The algorithm, per (appID, widgetType), over release builds only (debug builds are a developer trying something
/// and never count):
/// 1. Sum the window's `unknownType` rollups per app version (platforms merged): events, and installs as the union
///    of the HyperLogLog sketches.
/// 2. The type is flagged when some single version reaches both `minInstalls` distinct installs and `minEvents`
///    events. Both floors matter: events alone would flag one stuck install retrying a page, installs alone a type
///    seen once each by a handful of users; together they say real users keep hitting it.
/// 3. Every version that reported it is an affected version; its install share divides its reporting installs by
///    its installs in the window (version rollups, unioned with the reporting installs themselves so sketch error
///    never pushes the share above 1).
/// 4. Rendering versions, among those with traffic in the window: by the version's capability manifest
///    (docs/api.md#capability-manifests, ``ManifestIndex``) where it uploaded one; else those whose
///    `capabilities.registeredTypes` list the type; for versions that send no capabilities at all, those with
///    traffic (at least one batch) and no `unknownType` for it.
/// 5. The suggested gate is the lowest rendering version above every affected version, which is the lowest
///    rendering version whenever versions only ever gain types; when an affected version is newer than every
///    rendering one no minimum version gates it, and the gate is nil rather than a wrong one.
/// 6. Deploy attribution by ``DeployAttributor``, from the releases of the earliest minute whose events carry one.
/// 7. When nothing renders the type, the nearest known type within ``Configuration/maxTypoDistance``
///    Damerau–Levenshtein edits (known: registered by some version, rendered by some version, or reported as
///    `malformedPayload` or `duplicateID`, which only a registered type can produce) is its likely original; ties go
///    to the smaller distance, then to the type more versions register, then to the lexically first name.
/// 8. Status (``UnknownTypeHistory``): `regressed` when its events in the window follow at least
///    ``Configuration/regressionQuiet`` (48 h) without any release `unknownType` for it, after earlier ones (the
///    backend gated or fixed it, and something undid that); else `ongoing` when it was reported before the window;
///    else `new`.
public struct UngatedTypeFinder: Sendable {
    /// Thresholds and windows; the defaults are the contract's.
    public struct Configuration: Sendable, Hashable {
        /// Distinct installs some version must report the type from (`--min-installs`).
        public var minInstalls: Int64 = 5
        /// Events some version must report (`--min-events`).
        public var minEvents: Int64 = 20
        /// How long before `firstSeen` a deploy may finish to be suspected on timing alone (`--deploy-window`).
        public var deployWindow: Duration = .seconds(3600)
        /// How far before the window deploys are read, so a release deployed days ago still matches its events.
        public var deployLookback: Duration = .seconds(30 * 86_400)
        /// The largest edit distance at which a known type counts as the likely original of a typo.
        ///
        /// Two edits catch a dropped, doubled, swapped or mistyped letter or two; more would pair unrelated short
        /// names. A candidate must also be closer than the shorter name's length, so `ab` never "corrects" to `xy`.
        public var maxTypoDistance = 2
        /// How long a type must have been quiet (no release `unknownType`) before its return counts as a regression
        /// (`--regression-quiet`). Two days outlast a weekend without traffic from a small app and the longest
        /// backend rollback; shorter gaps are a type the backend still sends to few users.
        public var regressionQuiet: Duration = .seconds(48 * 3600)
        /// How far before the window the hourly history for the status is read.
        public var regressionLookback: Duration = .seconds(30 * 86_400)

        /// The contract's defaults.
        public init() {}
    }

    /// The thresholds in force.
    public var configuration: Configuration

    /// Creates a finder.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Reads the window [`from`, `to`) from `reader` and reports the ungated types, for one app or (nil) all.
    ///
    /// Throws what the reader throws.
    public func report(reader: some RollupReader, from: Timestamp, to: Timestamp, appID: String? = nil) throws
        -> UngatedReport
    {
        let series = try reader.seriesRollups(
            SeriesQuery(
                from: from, to: to, appID: appID, kinds: [.unknownType, .malformedPayload, .duplicateID],
                buildConfiguration: .release))
        let versions = try reader.versionRollups(from: from, to: to, appID: appID)
        var knownTypes: [String: Set<String>] = [:]
        for kind in [DiagnosticKind.malformedPayload, .duplicateID] {
            for seen in try reader.firstSeen(appID: appID, kind: kind, buildConfiguration: .release) {
                knownTypes[seen.appID, default: []].insert(seen.widgetType)
            }
        }
        let lookbackStart = Timestamp(
            secondsSinceEpoch: from.secondsSinceEpoch - configuration.deployLookback.components.seconds)
        let deploys = try reader.deploys(from: lookbackStart, to: to)
        let manifests = try ManifestIndex.load(reader: reader, appID: appID)
        let found = report(
            from: from, to: to, seriesRollups: series, versionRollups: versions, knownTypes: knownTypes,
            deploys: deploys, manifests: manifests)
        let history = try self.history(reader: reader, of: found.ungated, from: from, to: to, appID: appID)
        return withStatus(found, history: history)
    }

    /// The hourly `unknownType` history of `types` (only those: a type flooding for a month is one row per hour,
    /// the long tail is not read at all) from ``Configuration/regressionLookback`` before `from`.
    public func history(
        reader: some RollupReader, of types: [UngatedType], from: Timestamp, to: Timestamp, appID: String?
    ) throws -> UnknownTypeHistory {
        guard !types.isEmpty else { return UnknownTypeHistory() }
        let lookbackStart = Timestamp(
            secondsSinceEpoch: SpikeDetector.floor(
                from.secondsSinceEpoch - configuration.regressionLookback.components.seconds, to: 3600))
        let buckets = try reader.seriesBuckets(
            SeriesQuery(
                from: lookbackStart, to: to, appID: appID, kinds: [.unknownType],
                widgetTypes: Set(types.map(\.widgetType)), buildConfiguration: .release),
            bucketSeconds: 3600)
        let firstSeen = try reader.firstSeen(appID: appID, kind: .unknownType, buildConfiguration: .release)
        return UnknownTypeHistory(buckets: buckets, firstSeen: firstSeen, lookbackStart: lookbackStart)
    }

    /// `report` with every type's ``UngatedType/status`` set from `history`.
    public func withStatus(_ report: UngatedReport, history: UnknownTypeHistory) -> UngatedReport {
        var report = report
        for index in report.ungated.indices {
            let type = report.ungated[index]
            let found = history.status(
                appID: type.appID, widgetType: type.widgetType, from: report.from, to: report.to,
                quiet: configuration.regressionQuiet)
            report.ungated[index].status = found.status
            report.ungated[index].lastSeenBefore = found.lastSeenBefore
        }
        return report
    }

    /// Reports the ungated types from rollups already read; the pure core of ``report(reader:from:to:appID:)``.
    ///
    /// `seriesRollups` may hold any kinds, builds and windows: only release rollups in [`from`, `to`) count.
    /// `knownTypes` adds, per app, types known from outside the window (earlier `malformedPayload`/`duplicateID`);
    /// `manifests` decide what the versions that uploaded one render.
    public func report(
        from: Timestamp, to: Timestamp, seriesRollups: [SeriesRollup], versionRollups: [VersionRollup],
        knownTypes: [String: Set<String>] = [:], deploys: [DeployMarker] = [],
        manifests: ManifestIndex = ManifestIndex()
    ) -> UngatedReport {
        let window = from.secondsSinceEpoch..<to.secondsSinceEpoch
        let inWindow = seriesRollups.filter {
            $0.series.buildConfiguration == .release && window.contains($0.window.start)
        }
        let versions = Dictionary(
            grouping: versionRollups.filter {
                $0.key.buildConfiguration == .release && window.contains($0.window.start)
            },
            by: \.key.appID)
        let attributor = DeployAttributor(deploys: deploys, deployWindow: configuration.deployWindow)
        // A canary beside a stable release: the release that raises the type where its sibling does not is blamed
        // before the releases of the earliest events.
        let canary = CanaryComparison(rollups: inWindow)
        var found: [UngatedType] = []
        for (app, rollups) in Dictionary(grouping: inWindow, by: \.series.appID) {
            let context = AppContext(
                rollups: rollups, versionRollups: versions[app] ?? [], extraKnownTypes: knownTypes[app] ?? [],
                manifests: manifests.versions[app] ?? [:])
            for (widgetType, typeRollups) in context.unknownTypeRollups {
                if let finding = ungated(
                    app: app, widgetType: widgetType, rollups: typeRollups, context: context, attributor: attributor,
                    canary: canary)
                {
                    found.append(finding)
                }
            }
        }
        found.sort {
            if $0.events != $1.events { return $0.events > $1.events }
            if $0.appID != $1.appID { return $0.appID < $1.appID }
            return $0.widgetType < $1.widgetType
        }
        return UngatedReport(from: from, to: to, ungated: found)
    }

    private func ungated(
        app: String, widgetType: String, rollups: [SeriesRollup], context: AppContext, attributor: DeployAttributor,
        canary: CanaryComparison
    ) -> UngatedType? {
        var perVersion: [String: (events: Int64, installs: HyperLogLog)] = [:]
        var allInstalls = HyperLogLog()
        for rollup in rollups {
            perVersion[rollup.series.appVersion, default: (0, HyperLogLog())].events += rollup.events
            perVersion[rollup.series.appVersion]?.installs.merge(rollup.installs)
            allInstalls.merge(rollup.installs)
        }
        let flagged = perVersion.values.contains {
            $0.events >= configuration.minEvents && $0.installs.count >= configuration.minInstalls
        }
        guard flagged else { return nil }

        let affected = perVersion.map { version, totals in
            let population = (context.versions[version]?.installs ?? HyperLogLog()).merging(totals.installs)
            let share = population.count > 0 ? min(1, Double(totals.installs.count) / Double(population.count)) : 0
            return AffectedVersion(
                appVersion: version, events: totals.events, installs: totals.installs.count,
                installShare: (share * 10_000).rounded() / 10_000)
        }
        .sorted { VersionOrder.less($0.appVersion, $1.appVersion) }

        let rendering = context.renderingVersions(of: widgetType)
        let newestAffected = affected.map(\.appVersion).max(by: VersionOrder.less)
        let gate = rendering.first { version in
            newestAffected.map { AppVersion(version) > AppVersion($0) } ?? true
        }

        var pages: Set<String> = []
        for rollup in rollups {
            for sample in rollup.samples { if let page = sample.pageID { pages.insert(page) } }
        }
        let firstSeen = rollups.map(\.firstSeen).min()!
        let earliestWithRelease = rollups.filter { !$0.releases.isEmpty }.map(\.window).min()
        var earliestReleases: [String: Int64] = [:]
        for rollup in rollups where rollup.window == earliestWithRelease {
            earliestReleases.merge(rollup.releases, uniquingKeysWith: +)
        }

        return UngatedType(
            appID: app, widgetType: widgetType, events: perVersion.values.reduce(0) { $0 + $1.events },
            installs: allInstalls.count, affectedVersions: affected, renderingVersions: rendering,
            suggestedMinAppVersion: gate, firstSeen: firstSeen,
            suspectDeploy: attributor.suspect(
                firstSeen: firstSeen, earliestReleases: earliestReleases,
                blamed: canary.blamed(
                    appID: app, kind: .unknownType, widgetType: widgetType, among: rollups.flatMap(\.releases.keys))),
            likelyTypoOf: rendering.isEmpty
                ? context.likelyOriginal(of: widgetType, maxDistance: configuration.maxTypoDistance) : nil,
            pages: pages.sorted())
    }
}
