import FlowmeterModels
import Foundation

/// The seeded world of one simulation: which batch is sent when, from which install, with which events; and the
/// ground truth of what the detector should find in it.
///
/// Batch `i` of `batchCount` is built from the seed and `i` alone, so concurrent senders can build batches in any
/// order and the same seed always plants the same traffic over the same simulated hours.
struct TrafficScenario: Sendable {
    /// One batch ready to send, and how.
    struct PlannedBatch: Sendable {
        var batch: DiagnosticBatch
        var usesGzip: Bool
    }

    static let ungatedType = "hologram_projector"
    static let ungatedGate = "5.3.0"
    static let typo = "imgae_text_card"
    static let typoOf = "image_text_card"
    static let malformedType = "image_text_card"
    static let missingKey = "imageURL"
    static let duplicateType = "product_grid"
    static let duplicatePage = "search"
    static let debugOnlyType = "dev_playground_widget"
    static let gatedType = "story_ring"
    static let retiredTypes = [
        "legacy_banner", "news_ticker", "promo_strip_v1", "survey_prompt", "weather_card", "flash_sale_v0",
        "coupon_wheel", "loyalty_badge",
    ]

    let seed: UInt64
    /// Start and end of the simulated hours, whole seconds since the epoch.
    let start: Int64
    let end: Int64
    let batchCount: Int
    /// A per-run value mixed into batch and event ids only, so a second run against the same collector is counted
    /// again instead of being answered as a retry.
    let runID: UInt64
    let apps: [SimulatedApp]
    let deploys: [SimulatedDeploy]
    /// The hour the ungated type was sent two days before its return, or nil when that lies beyond the collector's
    /// 72 h maximum event age (more than about 19 simulated hours).
    let earlierEpisode: Range<Int64>?

    /// How long before the ungated type's return its earlier episode ended: more than the 48 h of
    /// `--regression-quiet`, so the return is a regression.
    static let regressionQuiet: Int64 = 50 * 3600

    init(seed: UInt64, end: Int64, simulatedSeconds: Int64, batchCount: Int, runID: UInt64) {
        self.seed = seed
        self.end = end
        self.start = end - simulatedSeconds
        self.batchCount = batchCount
        self.runID = runID
        self.apps = SimulatedApp.fleet
        let day = Self.dayStamp(end - simulatedSeconds)
        let start = end - simulatedSeconds
        // The ungated fault's deploy finishes at 35% of the simulated hours; its earlier episode ends 50 h before.
        let returnAt = start + Int64((Double(simulatedSeconds) * 0.35).rounded())
        let episodeEnd = returnAt - Self.regressionQuiet
        let episode = episodeEnd - 3600..<episodeEnd
        // Events older than 72 h are dropped by the collector: plant the episode only well inside that.
        earlierEpisode = episode.lowerBound >= end - 70 * 3600 ? episode : nil
        var earlier: [SimulatedDeploy] = []
        if let episode = earlierEpisode {
            let fraction = { (time: Int64) in Double(time - start) / Double(max(simulatedSeconds, 1)) }
            earlier = [
                SimulatedDeploy(
                    service: "page-api", version: "\(Self.dayStamp(episode.lowerBound))-5",
                    fraction: fraction(episode.lowerBound), fault: .earlierUngatedType),
                SimulatedDeploy(
                    service: "page-api", version: "\(Self.dayStamp(episode.upperBound))-6",
                    fraction: fraction(episode.upperBound), fault: nil),
            ]
        }
        deploys =
            earlier + [
                SimulatedDeploy(service: "trip-api", version: "3.8.0", fraction: 0.08, fault: nil),
                SimulatedDeploy(service: "page-api", version: "\(day)-1", fraction: 0.15, fault: nil),
                SimulatedDeploy(service: "article-api", version: "1.42.0", fraction: 0.25, fault: nil),
                SimulatedDeploy(service: "page-api", version: "\(day)-2", fraction: 0.35, fault: .ungatedType),
                SimulatedDeploy(service: "trip-api", version: "3.8.1", fraction: 0.50, fault: nil),
                SimulatedDeploy(service: "page-api", version: "\(day)-3", fraction: 0.60, fault: .typo),
                SimulatedDeploy(service: "page-api", version: "\(day)-4", fraction: 0.75, fault: .malformedPayload),
            ]
    }

    /// When `deploy` finished, in simulated time.
    func finishedAt(_ deploy: SimulatedDeploy) -> Int64 {
        start + Int64((Double(end - start) * deploy.fraction).rounded())
    }

    /// The simulated second at which a fault begins, or nil when no deploy ships it.
    func faultStart(_ fault: SimulatedDeploy.Fault) -> Int64? {
        deploys.first { $0.fault == fault }.map(finishedAt)
    }

    /// The release of `service` serving at simulated second `time`.
    func release(of service: String, at time: Int64) -> String {
        let live = deploys.last { $0.service == service && finishedAt($0) <= time }
        return live?.release ?? "\(service)@\(service == "page-api" ? "\(Self.dayStamp(start - 86_400))-9" : "1.0.0")"
    }

    /// Batch `index`: its install, version, decodes per page, and the events those decodes produced.
    func batch(at index: Int) -> PlannedBatch {
        var random = SimulationRandom(seed: seed, UInt64(index))
        let span = Double(end - start)
        let sentTime = start + Int64(span * (Double(index) + random.unit()) / Double(max(batchCount, 1)))
        // Every event of a batch happened at one moment a little before it was sent, so a fault and the release
        // that shipped it always agree.
        let time = max(start, sentTime - Int64(random.next(below: 60)))
        let appIndex = pickApp(random.unit())
        let app = apps[appIndex]
        let install = random.next(below: app.installCount)
        var device = SimulationRandom(seed: seed, 1_000 + UInt64(appIndex), UInt64(install))
        let installID = device.uuid()
        let isAndroid = device.chance(0.4)
        let isDebug = device.chance(0.03)
        let upgradePoint = device.unit()
        let versionPoint = device.unit()
        let osVersion = isAndroid ? "\(13 + device.next(below: 3))" : "18.\(device.next(below: 4))"
        let progress = Double(time - start) / max(span, 1)
        let adoption = app.adoption.start + (app.adoption.end - app.adoption.start) * progress
        let version = upgradePoint < adoption ? app.newest : olderVersion(of: app, at: versionPoint)

        let decodes = 3 + random.next(below: 40)
        var decodesPerPage: [String: Int] = [:]
        for _ in 0..<decodes {
            decodesPerPage[pickPage(of: app, random.unit()), default: 0] += 1
        }
        var events = EventList(time: time, release: release(of: app.service, at: time), random: random)
        addFaults(to: &events, app: app, version: version, pages: decodesPerPage)
        addNoise(to: &events, app: app, version: version, isDebug: isDebug, pages: decodesPerPage)
        addEarlierEpisode(to: &events, index: index, app: app, version: version, pages: decodesPerPage)
        var ids = SimulationRandom(seed: seed ^ runID, 7, UInt64(index))
        var batchEvents = events.events
        for position in batchEvents.indices where !ids.chance(0.2) {
            batchEvents[position].id = ids.uuid()
        }
        let client = ClientInfo(
            appID: app.appID, appVersion: version.name, build: version.build, platform: isAndroid ? "android" : "ios",
            osVersion: osVersion, sdkVersion: "1.4.2", installID: installID,
            buildConfiguration: isDebug ? .debug : .release, unknownPolicy: device.chance(0.5) ? .skip : .placeholder,
            capabilities: app.sendsCapabilities
                ? Capabilities(maxSchemaVersion: 7, registeredTypes: version.registeredTypes) : nil)
        let batch = DiagnosticBatch(
            id: ids.uuid(), sentAt: nil, client: client, decodes: decodes, events: batchEvents)
        return PlannedBatch(batch: batch, usesGzip: events.random.chance(app.gzipShare))
    }

    private func addFaults(
        to events: inout EventList, app: SimulatedApp, version: SimulatedApp.Version, pages: [String: Int]
    ) {
        guard app.service == "page-api" else { return }
        if let since = faultStart(.ungatedType), events.time >= since, let home = pages["home"],
            !version.registeredTypes.contains(Self.ungatedType)
        {
            events.add(
                .unknownType, Self.ungatedType, path: "page.sections.Index 0.widgets.Index 1",
                message: "Unknown widget type '\(Self.ungatedType)'", page: "home", count: home)
        }
        if let since = faultStart(.typo), events.time >= since, let deals = pages["deals"] {
            events.add(
                .unknownType, Self.typo, path: "page.sections.Index 1.widgets.Index 0",
                message: "Unknown widget type '\(Self.typo)'", page: "deals", count: deals)
        }
        if let since = faultStart(.malformedPayload), events.time >= since, let detail = pages["product_detail"] {
            events.add(
                .malformedPayload, Self.malformedType, path: "page.sections.Index 2.widgets.Index 0",
                message: "Missing key '\(Self.missingKey)'", page: "product_detail", count: detail)
        }
        // story_ring is gated right (sent only to versions that render it), so its only trace is a rare duplicate id.
        if version.registeredTypes.contains(Self.gatedType), pages["home"] != nil, events.random.chance(0.02) {
            events.add(
                .duplicateID, Self.gatedType, path: "page.header.Index 0", message: "Duplicate id 'ring-1'",
                page: "home", count: 1)
        }
        // Steady, one per batch at most: a known, old bug rather than news.
        if pages[Self.duplicatePage] != nil, events.random.chance(0.3) {
            events.add(
                .duplicateID, Self.duplicateType, path: "page.sections.Index 0.widgets.Index 3",
                message: "Duplicate id 'grid-3'", page: Self.duplicatePage, count: 1)
        }
    }

    /// Two days before, page-api sent the ungated type for an hour (then rolled it back): some batches of the run
    /// still carry events from then, uploaded late. A random stream of its own, so the rest of the traffic is the
    /// same with or without the episode.
    private func addEarlierEpisode(
        to events: inout EventList, index: Int, app: SimulatedApp, version: SimulatedApp.Version, pages: [String: Int]
    ) {
        guard let episode = earlierEpisode, app.service == "page-api", let home = pages["home"],
            !version.registeredTypes.contains(Self.ungatedType)
        else { return }
        var random = SimulationRandom(seed: seed, 11, UInt64(index))
        guard random.chance(0.05) else { return }
        let time = episode.lowerBound + Int64(random.next(below: Int(episode.upperBound - episode.lowerBound)))
        events.add(
            .unknownType, Self.ungatedType, path: "page.sections.Index 0.widgets.Index 1",
            message: "Unknown widget type '\(Self.ungatedType)'", page: "home", count: home, at: time,
            release: release(of: app.service, at: time))
    }

    private func addNoise(
        to events: inout EventList, app: SimulatedApp, version: SimulatedApp.Version, isDebug: Bool,
        pages: [String: Int]
    ) {
        let page = pages.keys.sorted()[events.random.next(below: pages.count)]
        // A low, steady rate of one old payload bug per app: the baseline the malformed-payload spike rises from.
        if events.random.chance(app.service == "page-api" ? 0.05 : 0.02) {
            let type = app.service == "page-api" ? Self.malformedType : version.registeredTypes[0]
            events.add(
                .malformedPayload, type, path: "page.sections.Index \(events.random.next(below: 4)).widgets.Index 0",
                message: "Missing key 'title'", page: page, count: 1)
        }
        if events.random.chance(0.03) {
            events.add(
                .droppedElement, nil, path: "page.sections.Index \(events.random.next(below: 4)).widgets.Index 2",
                message: "Element without a type", page: page, count: 1)
        }
        // Retired types on cached pages: a fixed budget of about 150 events however many batches, so the long
        // tail stays under the ungated thresholds at every scale.
        if events.random.chance(min(0.03, 150 / Double(max(batchCount, 1)))) {
            let type = Self.retiredTypes[events.random.next(below: Self.retiredTypes.count)]
            events.add(
                .unknownType, type, path: "page.sections.Index 3.widgets.Index 0",
                message: "Unknown widget type '\(type)'", page: page, count: 1)
        }
        if version.name == app.newest.name, events.random.chance(0.03) {
            events.add(
                DiagnosticKind(rawValue: "unknownArrangement")!, "carousel_v2", path: "page.sections.Index 1",
                message: "Unknown arrangement 'masonry'", page: page, count: 1)
        }
        if isDebug, events.random.chance(0.5) {
            events.add(
                .unknownType, Self.debugOnlyType, path: "page.sections.Index 0.widgets.Index 0",
                message: "Unknown widget type '\(Self.debugOnlyType)'", page: page,
                count: 1 + events.random.next(below: 5))
        }
    }

    private func pickApp(_ point: Double) -> Int {
        var total = 0.0
        for (index, app) in apps.enumerated() {
            total += app.trafficShare
            if point < total { return index }
        }
        return apps.count - 1
    }

    private func pickPage(of app: SimulatedApp, _ point: Double) -> String {
        var total = 0.0
        for page in app.pages {
            total += page.weight
            if point < total { return page.id }
        }
        return app.pages[app.pages.count - 1].id
    }

    private func olderVersion(of app: SimulatedApp, at point: Double) -> SimulatedApp.Version {
        var total = 0.0
        for version in app.versions.dropLast() {
            total += version.share
            if point < total { return version }
        }
        return app.versions[max(0, app.versions.count - 2)]
    }

    /// `YYYY.MM.DD` of a second since the epoch, in UTC, as page-api names its releases.
    static func dayStamp(_ seconds: Int64) -> String {
        let stamp = Timestamp(secondsSinceEpoch: seconds).rfc3339String
        return String(stamp.prefix(10)).replacingOccurrences(of: "-", with: ".")
    }
}

/// The events of one batch as they are built, all at the batch's moment and carrying the serving release.
private struct EventList {
    let time: Int64
    let release: String
    var random: SimulationRandom
    var events: [DiagnosticEvent] = []

    init(time: Int64, release: String, random: SimulationRandom) {
        self.time = time
        self.release = release
        self.random = random
    }

    /// Adds an event at the batch's moment and release, or at `at` with `release` (an event from long ago).
    mutating func add(
        _ kind: DiagnosticKind, _ type: String?, path: String, message: String, page: String, count: Int,
        at: Int64? = nil, release: String? = nil
    ) {
        events.append(
            DiagnosticEvent(
                kind: kind, widgetType: type, codingPath: path, message: message, pageID: page,
                surface: random.chance(0.8) ? "page" : "sheet",
                backendRelease: random.chance(0.9) ? release ?? self.release : nil, count: max(1, count),
                occurredAt: Timestamp(
                    secondsSinceEpoch: at ?? time, nanoseconds: Int32(random.next(below: 1000)) * 1_000_000)
            ))
    }
}
