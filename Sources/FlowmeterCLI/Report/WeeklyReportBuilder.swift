public import Detector
public import FlowmeterModels
public import Rollups

/// Computes a ``WeeklyReport`` from a rollup store: two weeks of release rollups, the detector's ungated types for
/// each week, the week's spikes, new types and deploys.
///
/// Reads block on the store: call ``report(reader:week:appID:now:)`` off the cooperative pool.
public struct WeeklyReportBuilder: Sendable {
    /// Thresholds for ungated types (both weeks use the same).
    public var ungatedFinder: UngatedTypeFinder
    /// The spike detector run over the week.
    public var spikeDetector: SpikeDetector
    /// The gate finder run over the four weeks up to the week's end.
    public var gateFinder: GateFinder
    /// Who owns what: the actions' teams; nil leaves them without one.
    public var owners: OwnerRules?

    /// Creates a builder with the contract's default thresholds.
    public init(
        ungatedFinder: UngatedTypeFinder = UngatedTypeFinder(), spikeDetector: SpikeDetector = SpikeDetector(),
        gateFinder: GateFinder = GateFinder(), owners: OwnerRules? = nil
    ) {
        self.ungatedFinder = ungatedFinder
        self.spikeDetector = spikeDetector
        self.gateFinder = gateFinder
        self.owners = owners
    }

    /// The report on `week` (compared with the week before), for one app or (nil) all; throws what the reader throws.
    public func report(
        reader: some RollupReader, week: ISOWeek, appID: String? = nil, now: Timestamp
    ) throws -> WeeklyReport {
        let from = week.start
        let to = week.end
        let previousFrom = week.previous.start
        let series = try reader.seriesRollups(
            SeriesQuery(from: previousFrom, to: to, appID: appID, buildConfiguration: .release))
        let versions = try reader.versionRollups(from: previousFrom, to: to, appID: appID).filter {
            $0.key.buildConfiguration == .release
        }
        var knownTypes: [String: Set<String>] = [:]
        for kind in [DiagnosticKind.malformedPayload, .duplicateID] {
            for seen in try reader.firstSeen(appID: appID, kind: kind, buildConfiguration: .release) {
                knownTypes[seen.appID, default: []].insert(seen.widgetType)
            }
        }
        let lookback = ungatedFinder.configuration.deployLookback.components.seconds
        let deploys = try reader.deploys(
            from: Timestamp(secondsSinceEpoch: previousFrom.secondsSinceEpoch - lookback), to: to)
        let manifests = try ManifestIndex.load(reader: reader, appID: appID)
        let found = ungatedFinder.report(
            from: from, to: to, seriesRollups: series, versionRollups: versions, knownTypes: knownTypes,
            deploys: deploys, manifests: manifests)
        let thisWeek = ungatedFinder.withStatus(
            found,
            history: try ungatedFinder.history(reader: reader, of: found.ungated, from: from, to: to, appID: appID)
        ).ungated
        let lastWeek = ungatedFinder.report(
            from: previousFrom, to: from, seriesRollups: series, versionRollups: versions, knownTypes: knownTypes,
            deploys: deploys, manifests: manifests
        ).ungated
        let drift = try ManifestDriftFinder().report(reader: reader, from: from, to: to, appID: appID)
        let spikesReport = try spikeDetector.report(reader: reader, from: from, to: to, appID: appID)
        let spikes = spikesReport.spikes.sorted { $0.onset < $1.onset }
        let incidents = spikesReport.incidents
        // Gates as of the week's end (or now, for the week in progress), over the four weeks before.
        let gatesEnd = min(to, now)
        let gates = try gateFinder.report(
            reader: reader, from: Timestamp(secondsSinceEpoch: gatesEnd.secondsSinceEpoch - 28 * 86_400),
            to: gatesEnd, appID: appID
        ).gates
        let newTypes = try NewTypeFinder().newTypes(reader: reader, from: from, to: to, appID: appID)

        let currentSeries = series.filter { $0.window.start >= from.secondsSinceEpoch }
        let previousSeries = series.filter { $0.window.start < from.secondsSinceEpoch }
        let currentVersions = versions.filter { $0.window.start >= from.secondsSinceEpoch }
        let previousVersions = versions.filter { $0.window.start < from.secondsSinceEpoch }

        let ungated = Self.changes(
            thisWeek: thisWeek, lastWeek: lastWeek, current: currentSeries, previous: previousSeries)
        let malformed = Self.malformedGroups(currentSeries)
        let duplicates = Self.duplicatePages(currentSeries)
        let weekDeploys = deploys.filter { $0.finishedAt >= from && $0.finishedAt < to }
        var report = WeeklyReport(
            week: week, appID: appID, generatedAt: now,
            current: Self.summary(
                from: from, to: to, series: currentSeries, versions: currentVersions, ungated: thisWeek.count),
            previous: Self.summary(
                from: previousFrom, to: from, series: previousSeries, versions: previousVersions,
                ungated: lastWeek.count),
            ungated: ungated, newTypes: newTypes, malformed: malformed, duplicates: duplicates,
            versions: Self.versionHealth(current: currentVersions, previous: previousVersions, series: currentSeries),
            unknownByDay: Self.unknownByDay(from: from, series: currentSeries),
            deploys: weekDeploys.map { deploy in
                WeeklyReport.DeployImpact(
                    deploy: deploy, spikes: spikes.filter { Self.matches($0.suspectDeploy, deploy) },
                    ungatedTypes: thisWeek.filter { Self.matches($0.suspectDeploy, deploy) },
                    incidents: incidents.filter { Self.matches($0.suspectDeploy, deploy) })
            },
            spikes: spikes,
            actions: Self.actions(ungated: ungated, malformed: malformed, duplicates: duplicates).map { action in
                var action = action
                action.team = owners?.team(appID: action.appID, widgetType: action.widgetType, pages: action.pages)
                return action
            },
            incidents: incidents, gates: gates, hasOwners: owners != nil, manifestsChecked: drift.manifestCount,
            manifestDrift: drift.drift)
        report.canary = CanaryComparison(rollups: currentSeries).findings
        if !report.canary.isEmpty {
            report.canaryRates = MatrixCommand.canaryRates(
                report.canary, rows: MatrixCommand.rows(series: currentSeries, versions: currentVersions))
        }
        return report
    }

    private static func matches(_ suspect: SuspectDeploy?, _ deploy: DeployMarker) -> Bool {
        guard let suspect else { return false }
        return suspect.service == deploy.service && suspect.version == deploy.version
            && suspect.finishedAt == deploy.finishedAt
    }

    private static func summary(
        from: Timestamp, to: Timestamp, series: [SeriesRollup], versions: [VersionRollup], ungated: Int
    ) -> WeeklyReport.Summary {
        var events: [String: Int64] = [:]
        var affected = HyperLogLog()
        for rollup in series {
            events[rollup.series.kind.rawValue, default: 0] += rollup.events
            affected.merge(rollup.installs)
        }
        var installs = HyperLogLog()
        var batches: Int64 = 0
        var clean: Int64 = 0
        for rollup in versions {
            installs.merge(rollup.installs)
            batches += rollup.batches
            clean += rollup.cleanBatches
        }
        return WeeklyReport.Summary(
            from: from, to: to, eventsByKind: events, installsAffected: affected.count, installs: installs.count,
            batches: batches, cleanBatches: clean, ungatedTypes: ungated)
    }

    private struct TypeKey: Hashable {
        var appID: String
        var widgetType: String
    }

    private static func unknownEvents(_ series: [SeriesRollup]) -> [TypeKey: Int64] {
        var events: [TypeKey: Int64] = [:]
        for rollup in series where rollup.series.kind == .unknownType {
            events[TypeKey(appID: rollup.series.appID, widgetType: rollup.series.widgetType), default: 0] +=
                rollup.events
        }
        return events
    }

    private static func changes(
        thisWeek: [UngatedType], lastWeek: [UngatedType], current: [SeriesRollup], previous: [SeriesRollup]
    ) -> [WeeklyReport.UngatedChange] {
        let currentEvents = unknownEvents(current)
        let previousEvents = unknownEvents(previous)
        let key = { (type: UngatedType) in TypeKey(appID: type.appID, widgetType: type.widgetType) }
        let lastKeys = Set(lastWeek.map(key))
        let thisKeys = Set(thisWeek.map(key))
        var changes = thisWeek.map { type in
            WeeklyReport.UngatedChange(
                status: type.status == .regressed ? .regressed : lastKeys.contains(key(type)) ? .ongoing : .new,
                finding: type,
                events: currentEvents[key(type)] ?? 0, previousEvents: previousEvents[key(type)] ?? 0)
        }
        changes += lastWeek.filter { !thisKeys.contains(key($0)) }.map { type in
            WeeklyReport.UngatedChange(
                status: .resolved, finding: type, events: currentEvents[key(type)] ?? 0,
                previousEvents: previousEvents[key(type)] ?? 0)
        }
        let order = Dictionary(
            uniqueKeysWithValues: WeeklyReport.UngatedChange.Status.allCases.enumerated().map {
                ($1, $0)
            })
        return changes.sorted { (a: WeeklyReport.UngatedChange, b: WeeklyReport.UngatedChange) -> Bool in
            if a.status != b.status { return order[a.status]! < order[b.status]! }
            let left: Int64 = max(a.events, a.previousEvents)
            let right: Int64 = max(b.events, b.previousEvents)
            if left != right { return left > right }
            if a.finding.appID != b.finding.appID { return a.finding.appID < b.finding.appID }
            return a.finding.widgetType < b.finding.widgetType
        }
    }

    /// Names of keys a message says are missing, in order of appearance: the contract's `Missing key 'imageURL'` and
    /// Swift's `keyNotFound` description (`No value associated with key CodingKeys(stringValue: "imageURL", …`).
    public static func missingKeys(in message: String) -> [String] {
        var keys: [String] = []
        for (prefix, terminator) in [
            ("Missing key '", "'"), ("No value associated with key CodingKeys(stringValue: \"", "\""),
        ] {
            var rest = message[...]
            while let start = rest.range(of: prefix) {
                rest = rest[start.upperBound...]
                guard let end = rest.firstIndex(of: Character(terminator)) else { break }
                let key = String(rest[..<end])
                if !key.isEmpty && !keys.contains(key) { keys.append(key) }
                rest = rest[end...]
            }
        }
        return keys
    }

    /// Splits `events` over `parts` evenly, the remainder going to the first parts, so the shares sum to `events`.
    private static func apportion(_ events: Int64, over parts: Int) -> [Int64] {
        guard parts > 0 else { return [] }
        let share = events / Int64(parts)
        let remainder = Int(events % Int64(parts))
        return (0..<parts).map { share + ($0 < remainder ? 1 : 0) }
    }

    private static func malformedGroups(_ series: [SeriesRollup]) -> [WeeklyReport.MalformedGroup] {
        struct Accumulator {
            var events: Int64 = 0
            var installs = HyperLogLog()
            var versions: Set<String> = []
            var paths: [String: PathAccumulator] = [:]
        }
        struct PathAccumulator {
            var events: Int64 = 0
            var messages: Set<String> = []
        }
        var groups: [TypeKey: Accumulator] = [:]
        for rollup in series where rollup.series.kind == .malformedPayload {
            let key = TypeKey(appID: rollup.series.appID, widgetType: rollup.series.widgetType)
            var group = groups[key] ?? Accumulator()
            group.events += rollup.events
            group.installs.merge(rollup.installs)
            group.versions.insert(rollup.series.appVersion)
            var paths: [String] = []
            for sample in rollup.samples where !paths.contains(sample.codingPath) { paths.append(sample.codingPath) }
            if paths.isEmpty { paths = [""] }
            for (path, share) in zip(paths, apportion(rollup.events, over: paths.count)) {
                group.paths[path, default: PathAccumulator()].events += share
            }
            for sample in rollup.samples {
                guard let message = sample.message else { continue }
                group.paths[sample.codingPath, default: PathAccumulator()].messages.insert(message)
            }
            groups[key] = group
        }
        var result: [WeeklyReport.MalformedGroup] = []
        for (key, group) in groups {
            var paths: [WeeklyReport.MalformedPath] = []
            for (path, entry) in group.paths {
                let messages: [String] = entry.messages.sorted()
                let keys: [String] = Array(Set(messages.flatMap { missingKeys(in: $0) })).sorted()
                paths.append(
                    WeeklyReport.MalformedPath(
                        codingPath: path, events: entry.events, messages: Array(messages.prefix(5)), missingKeys: keys))
            }
            paths.sort { (a: WeeklyReport.MalformedPath, b: WeeklyReport.MalformedPath) -> Bool in
                a.events != b.events ? a.events > b.events : a.codingPath < b.codingPath
            }
            let keys: [String] = Array(Set(paths.flatMap { $0.missingKeys })).sorted()
            result.append(
                WeeklyReport.MalformedGroup(
                    appID: key.appID, widgetType: key.widgetType, events: group.events,
                    installs: group.installs.count, appVersions: group.versions.sorted(by: VersionOrder.less),
                    missingKeys: keys, paths: paths))
        }
        result.sort { (a: WeeklyReport.MalformedGroup, b: WeeklyReport.MalformedGroup) -> Bool in
            if a.events != b.events { return a.events > b.events }
            return a.appID != b.appID ? a.appID < b.appID : a.widgetType < b.widgetType
        }
        return result
    }

    private static func duplicatePages(_ series: [SeriesRollup]) -> [WeeklyReport.DuplicatePage] {
        struct PageKey: Hashable {
            var appID: String
            var pageID: String?
        }
        struct Accumulator {
            var events: Int64 = 0
            var types: Set<String> = []
            var messages: Set<String> = []
        }
        var pages: [PageKey: Accumulator] = [:]
        for rollup in series where rollup.series.kind == .duplicateID {
            var pageIDs: [String?] = []
            for sample in rollup.samples where !pageIDs.contains(sample.pageID) { pageIDs.append(sample.pageID) }
            if pageIDs.isEmpty { pageIDs = [nil] }
            for (pageID, share) in zip(pageIDs, apportion(rollup.events, over: pageIDs.count)) {
                let key = PageKey(appID: rollup.series.appID, pageID: pageID)
                pages[key, default: Accumulator()].events += share
                pages[key, default: Accumulator()].types.insert(rollup.series.widgetType)
            }
            for sample in rollup.samples {
                guard let message = sample.message else { continue }
                let key = PageKey(appID: rollup.series.appID, pageID: sample.pageID)
                pages[key, default: Accumulator()].messages.insert(message)
            }
        }
        var result: [WeeklyReport.DuplicatePage] = []
        for (key, entry) in pages {
            let messages: [String] = Array(entry.messages.sorted().prefix(3))
            result.append(
                WeeklyReport.DuplicatePage(
                    appID: key.appID, pageID: key.pageID, events: entry.events, widgetTypes: entry.types.sorted(),
                    messages: messages))
        }
        result.sort { (a: WeeklyReport.DuplicatePage, b: WeeklyReport.DuplicatePage) -> Bool in
            if a.events != b.events { return a.events > b.events }
            return a.appID != b.appID ? a.appID < b.appID : (a.pageID ?? "") < (b.pageID ?? "")
        }
        return result
    }

    private static func versionHealth(
        current: [VersionRollup], previous: [VersionRollup], series: [SeriesRollup]
    ) -> [WeeklyReport.VersionHealth] {
        struct VersionID: Hashable {
            var appID: String
            var appVersion: String
        }
        var installs: [VersionID: HyperLogLog] = [:]
        var appInstalls: [String: HyperLogLog] = [:]
        var batches: [VersionID: (all: Int64, clean: Int64)] = [:]
        var discarded: [VersionID: Int64] = [:]
        for rollup in current {
            let id = VersionID(appID: rollup.key.appID, appVersion: rollup.key.appVersion)
            installs[id, default: HyperLogLog()].merge(rollup.installs)
            appInstalls[id.appID, default: HyperLogLog()].merge(rollup.installs)
            batches[id, default: (0, 0)].all += rollup.batches
            batches[id, default: (0, 0)].clean += rollup.cleanBatches
            let (sum, overflow) = (discarded[id] ?? 0).addingReportingOverflow(rollup.clientDiscarded)
            discarded[id] = overflow ? .max : sum
        }
        var previousInstalls: [VersionID: HyperLogLog] = [:]
        for rollup in previous {
            previousInstalls[
                VersionID(appID: rollup.key.appID, appVersion: rollup.key.appVersion), default: HyperLogLog()
            ]
            .merge(rollup.installs)
        }
        var events: [VersionID: Int64] = [:]
        for rollup in series {
            events[VersionID(appID: rollup.series.appID, appVersion: rollup.series.appVersion), default: 0] +=
                rollup.events
        }
        var result: [WeeklyReport.VersionHealth] = []
        for (id, sketch) in installs {
            let count = sketch.count
            let total = appInstalls[id.appID]?.count ?? 0
            let adoption: Double = total > 0 ? min(1, Double(count) / Double(total)) : 0
            result.append(
                WeeklyReport.VersionHealth(
                    appID: id.appID, appVersion: id.appVersion, installs: count,
                    previousInstalls: previousInstalls[id]?.count ?? 0, adoption: adoption,
                    batches: batches[id]?.all ?? 0, cleanBatches: batches[id]?.clean ?? 0, events: events[id] ?? 0,
                    clientDiscarded: discarded[id] ?? 0))
        }
        result.sort { (a: WeeklyReport.VersionHealth, b: WeeklyReport.VersionHealth) -> Bool in
            a.appID != b.appID ? a.appID < b.appID : VersionOrder.less(b.appVersion, a.appVersion)
        }
        return result
    }

    private static func unknownByDay(from: Timestamp, series: [SeriesRollup]) -> WeeklyReport.UnknownByDay {
        let days = (0..<7).map { Timestamp(secondsSinceEpoch: from.secondsSinceEpoch + Int64($0) * 86_400) }
        var perType: [TypeKey: [Int64]] = [:]
        for rollup in series where rollup.series.kind == .unknownType {
            let day = Int((rollup.window.start - from.secondsSinceEpoch) / 86_400)
            guard (0..<7).contains(day) else { continue }
            let key = TypeKey(appID: rollup.series.appID, widgetType: rollup.series.widgetType)
            perType[key, default: Array(repeating: 0, count: 7)][day] += rollup.events
        }
        let ranked = perType.sorted { (a: (key: TypeKey, value: [Int64]), b: (key: TypeKey, value: [Int64])) -> Bool in
            let left: Int64 = a.value.reduce(0, +)
            let right: Int64 = b.value.reduce(0, +)
            if left != right { return left > right }
            return a.key.appID != b.key.appID ? a.key.appID < b.key.appID : a.key.widgetType < b.key.widgetType
        }
        let maxTypes = WeeklyReport.UnknownByDay.maxTypes
        var types = ranked.prefix(maxTypes).map {
            WeeklyReport.UnknownByDay.TypeDays(appID: $0.key.appID, widgetType: $0.key.widgetType, events: $0.value)
        }
        if ranked.count > maxTypes {
            var rest = Array(repeating: Int64(0), count: 7)
            for (_, events) in ranked.dropFirst(maxTypes) {
                for day in 0..<7 { rest[day] += events[day] }
            }
            types.append(WeeklyReport.UnknownByDay.TypeDays(appID: nil, widgetType: nil, events: rest))
        }
        return WeeklyReport.UnknownByDay(days: days, types: types)
    }

    private static func actions(
        ungated: [WeeklyReport.UngatedChange], malformed: [WeeklyReport.MalformedGroup],
        duplicates: [WeeklyReport.DuplicatePage]
    ) -> [WeeklyReport.Action] {
        typealias Action = WeeklyReport.Action
        var actions: [Action] = []
        for change in ungated where change.status != .resolved {
            let type = change.finding
            if let original = type.likelyTypoOf {
                actions.append(
                    Action(
                        kind: .fixTypo, appID: type.appID, widgetType: type.widgetType, events: change.events,
                        pages: type.pages,
                        segments: [.text("fix typo "), .code(type.widgetType), .text(" → "), .code(original)]))
            } else if let gate = type.suggestedMinAppVersion {
                actions.append(
                    Action(
                        kind: .gate, appID: type.appID, widgetType: type.widgetType, events: change.events,
                        pages: type.pages,
                        segments: [.text("gate "), .code(type.widgetType), .text(" at "), .value(gate)]))
            } else if type.renderingVersions.isEmpty {
                actions.append(
                    Action(
                        kind: .stopSending, appID: type.appID, widgetType: type.widgetType, events: change.events,
                        pages: type.pages,
                        segments: [
                            .text("stop sending "), .code(type.widgetType), .text(": no app version renders it"),
                        ]))
            } else {
                let newest = type.affectedVersions.map(\.appVersion).max(by: VersionOrder.less) ?? ""
                actions.append(
                    Action(
                        kind: .gateByCapability, appID: type.appID, widgetType: type.widgetType, events: change.events,
                        pages: type.pages,
                        segments: [
                            .text("gate "), .code(type.widgetType), .text(" on registered types: "), .value(newest),
                            .text(" does not render it, so no minimum version works"),
                        ]))
            }
        }
        for group in malformed {
            for key in group.missingKeys {
                let events = group.paths.filter { $0.missingKeys.contains(key) }.map(\.events).reduce(0, +)
                actions.append(
                    Action(
                        kind: .addMissingKey, appID: group.appID, widgetType: group.widgetType, events: events,
                        segments: [
                            .text("add missing key "), .code(key), .text(" to "), .code(group.widgetType),
                            .text(" payloads"),
                        ]))
            }
            for path in group.paths where path.missingKeys.isEmpty {
                var segments: [Action.Segment] = [.text("fix "), .code(group.widgetType), .text(" payloads")]
                if !path.codingPath.isEmpty { segments += [.text(" at "), .code(path.codingPath)] }
                if let message = path.messages.first { segments += [.text(": "), .value(message)] }
                actions.append(
                    Action(
                        kind: .fixPayload, appID: group.appID, widgetType: group.widgetType, events: path.events,
                        segments: segments))
            }
        }
        for page in duplicates {
            var segments: [Action.Segment] = [.text("make widget ids unique on page ")]
            segments.append(page.pageID.map { .code($0) } ?? .text("(unnamed)"))
            segments.append(.text(" ("))
            for (index, type) in page.widgetTypes.enumerated() {
                if index > 0 { segments.append(.text(", ")) }
                segments.append(.code(type))
            }
            segments.append(.text(")"))
            actions.append(
                Action(
                    kind: .dedupeIDs, appID: page.appID, widgetType: page.widgetTypes.first ?? "", events: page.events,
                    pages: page.pageID.map { [$0] } ?? [], segments: segments))
        }
        // Users see ungated types as missing content, malformed payloads as broken widgets, duplicates hardly at all.
        let rank: [Action.Kind: Int] = [
            .gate: 0, .fixTypo: 0, .stopSending: 0, .gateByCapability: 0, .addMissingKey: 1, .fixPayload: 1,
            .dedupeIDs: 2,
        ]
        return actions.enumerated().sorted {
            (a: (offset: Int, element: Action), b: (offset: Int, element: Action)) -> Bool in
            let left: Int = rank[a.element.kind]!
            let right: Int = rank[b.element.kind]!
            if left != right { return left < right }
            if a.element.events != b.element.events { return a.element.events > b.element.events }
            return a.offset < b.offset
        }.map(\.element)
    }
}
