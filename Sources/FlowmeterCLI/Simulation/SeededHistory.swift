import FlowmeterModels
import FlowmeterWire
import Foundation
import Hashing
import Kafka

/// Weeks of the simulated fleet's past, as the collector would have written them: one `flowmeter.batches.v1` record
/// per batch (docs/api.md#kafka-topics), each with the `receivedAt` of its day, so the sink builds them into the store
/// like any other records (the log is the source of truth).
///
/// The same installs as ``TrafficScenario`` (the same install ids, so the same salted pseudonyms, platforms and debug
/// builds) at the same pace: the simulated hours are the fleet's busiest of the day, and the history follows a daily
/// rhythm from 100% of that pace (at the simulated hours' hour of day) to 15% (twelve hours away), a little less at
/// weekends. So that weeks at that pace fit in a few seconds, each history record stands for ``batchesPerRecord`` of
/// the simulation's batches from one install, as if its SDK had gathered them into one upload: decodes summed, and
/// identical diagnostics pre-aggregated into one event whose `count` is their sum, dated at the upload. The spike
/// detector compares the simulated hours with the same hours of earlier days and weeks, so the history's diagnostics
/// per hour must be at the simulation's level. Versions are adopted over time: the share of installs on each version or
/// newer is a logistic curve (a straight line in log-odds) that reaches, at the start of the simulated hours, exactly
/// the mix the simulation begins with, and each install moves up when its own point (the simulation's) falls under the
/// curve, so it never moves down. The newest version came out ``newestAgeDays`` before the simulated hours. Diagnostics
/// are the simulation's steady background only (old payload bugs, duplicate ids, dropped elements, debug builds'
/// playground type, the newest version's unknown arrangement), at the simulation's rate per batch, plus the hour of the
/// earlier `hologram_projector` episode that the simulation's late uploads come from.
struct SeededHistory: Sendable {
    let scenario: TrafficScenario
    /// First and last second of the history's receipt times.
    let start: Int64
    let end: Int64
    /// Records of the whole fleet in the busiest hour of a weekday.
    let peakRecordsPerHour: Int
    /// How many of the simulation's batches one record stands for: its batches per simulated hour over
    /// `peakRecordsPerHour`.
    let batchesPerRecord: Int
    /// The hour of the day (UTC, fractional) in the middle of the simulated hours: the rhythm's peak.
    let peakHour: Double
    let salt: [UInt8]

    /// How long before the simulated hours the newest version of each app came out.
    static let newestAgeDays = 7.0
    /// How fast installs move to each older version: the slope of its share's log-odds per day.
    static let olderRatePerDay = 0.12
    /// The share of installs on the newest version on its first day.
    static let newestFirstShare = 0.002
    /// How long before the simulated hours the history ends: the spike detector judges each 5-minute bucket against
    /// the day and the hour before the window, and those must hold the simulated hours' traffic alone (see
    /// docs/demo.md).
    static let gapBeforeSimulation: Int64 = 27 * 3600

    /// The history of `days` days before the simulated hours of `scenario`, ending ``gapBeforeSimulation`` before
    /// them.
    init(scenario: TrafficScenario, days: Int, peakRecordsPerHour: Int = 40, salt: [UInt8]) {
        self.scenario = scenario
        end = scenario.start - Self.gapBeforeSimulation
        start = min(end, scenario.end - Int64(days) * 86_400 + 3600)
        self.peakRecordsPerHour = peakRecordsPerHour
        let hours = max(Double(scenario.end - scenario.start) / 3600, 1.0 / 60)
        let pace = Double(scenario.batchCount) / hours
        batchesPerRecord = max(1, Int((pace / Double(peakRecordsPerHour)).rounded()))
        peakHour = Double(((scenario.start + scenario.end) / 2) % 86_400) / 3600
        self.salt = salt
    }

    /// One batch of the history, before it becomes a record.
    struct Batch {
        var batch: DiagnosticBatch
        var receivedAt: Int64
    }

    /// Every batch, oldest first, built from the seed alone.
    func batches() -> [Batch] {
        var batches: [Batch] = []
        var hour = start - start % 3600
        while hour < end {
            var random = SimulationRandom(seed: scenario.seed, 21, UInt64(hour))
            let expected = Double(peakRecordsPerHour) * rhythm(at: hour)
            let count = Int(expected) + (random.chance(expected - expected.rounded(.down)) ? 1 : 0)
            for index in 0..<count {
                let time = hour + Int64(random.next(below: 3600))
                guard time >= start && time < end else { continue }
                batches.append(
                    batch(at: time, random: SimulationRandom(seed: scenario.seed, 22, UInt64(hour), UInt64(index))))
            }
            hour += 3600
        }
        return batches.sorted { $0.receivedAt < $1.receivedAt }
    }

    /// The share of the peak hour's batches sent in the hour of `time`: 100% at ``peakHour``, 15% twelve hours
    /// away, times 0.85 on Saturdays and Sundays.
    func rhythm(at time: Int64) -> Double {
        let hourOfDay = Double(time % 86_400) / 3600
        let daily = 0.15 + 0.85 * (0.5 + 0.5 * cos(2 * Double.pi * (hourOfDay - peakHour) / 24))
        // 1970-01-01 was a Thursday: days 2 and 3 of a week counted from Thursday are Saturday and Sunday.
        let weekday = (time / 86_400) % 7
        return daily * (weekday == 2 || weekday == 3 ? 0.85 : 1)
    }

    /// The share of `app`'s installs on version `index` or newer at `time` (index 0, the oldest, is 1).
    func shareAtOrAbove(_ index: Int, of app: SimulatedApp, at time: Int64) -> Double {
        let days = Double(time - scenario.start) / 86_400
        let newest = app.versions.count - 1
        if index == 0 { return 1 }
        if index == newest {
            guard days >= -Self.newestAgeDays else { return 0 }
            let rate = (Self.logOdds(app.adoption.start) - Self.logOdds(Self.newestFirstShare)) / Self.newestAgeDays
            return Self.logistic(Self.logOdds(app.adoption.start) + rate * days)
        }
        // Among installs not on the newest version, the share on `index` or newer when the simulation starts.
        let atStart = app.versions[index..<newest].reduce(0) { $0 + $1.share }
        return Self.logistic(Self.logOdds(min(max(atStart, 0.001), 0.999)) + Self.olderRatePerDay * days)
    }

    private func batch(at time: Int64, random: SimulationRandom) -> Batch {
        var random = random
        let apps = scenario.apps
        let point = random.unit()
        var total = 0.0
        let appIndex =
            apps.indices.first { index in
                total += apps[index].trafficShare
                return point < total
            } ?? apps.count - 1
        let app = apps[appIndex]
        let install = random.next(below: app.installCount)
        // The simulation's install: the same draws in the same order (TrafficScenario.batch(at:)).
        var device = SimulationRandom(seed: scenario.seed, 1_000 + UInt64(appIndex), UInt64(install))
        let installID = device.uuid()
        let isAndroid = device.chance(0.4)
        let isDebug = device.chance(0.03)
        let upgradePoint = device.unit()
        let versionPoint = device.unit()
        let osVersion = isAndroid ? "\(13 + device.next(below: 3))" : "18.\(device.next(below: 4))"
        let newest = app.versions.count - 1
        var versionIndex = 0
        if upgradePoint < shareAtOrAbove(newest, of: app, at: time) {
            versionIndex = newest
        } else {
            for index in 1..<max(newest, 1) where 1 - versionPoint < shareAtOrAbove(index, of: app, at: time) {
                versionIndex = index
            }
        }
        let version = app.versions[versionIndex]
        // Every diagnostic of the record is dated at its upload, in the same minute as its decodes: the spike detector
        // divides a bucket's diagnostics by the decodes received in it, and a record whose diagnostics fell into one
        // bucket and its decodes into the next would look like a burst.
        var events = Aggregate(moment: (time, scenario.release(of: app.service, at: time)))
        var decodes = 0
        for _ in 0..<batchesPerRecord {
            decodes += addBatch(
                to: &events, app: app, version: version, isNewest: versionIndex == newest, isDebug: isDebug,
                random: &random)
        }
        let client = ClientInfo(
            appID: app.appID, appVersion: version.name, build: version.build, platform: isAndroid ? "android" : "ios",
            osVersion: osVersion, sdkVersion: "1.4.2", installID: installID,
            buildConfiguration: isDebug ? .debug : .release, unknownPolicy: device.chance(0.5) ? .skip : .placeholder,
            capabilities: app.sendsCapabilities
                ? Capabilities(maxSchemaVersion: 7, registeredTypes: version.registeredTypes) : nil)
        let batch = DiagnosticBatch(
            id: random.uuid(), sentAt: nil, client: client, decodes: decodes, events: events.events)
        return Batch(batch: batch, receivedAt: time)
    }

    /// One of the simulation's batches inside a record: its decodes (returned) and its steady background
    /// diagnostics, at the simulation's rates (``TrafficScenario``'s noise), added to `events`.
    private func addBatch(
        to events: inout Aggregate, app: SimulatedApp, version: SimulatedApp.Version, isNewest: Bool, isDebug: Bool,
        random: inout SimulationRandom
    ) -> Int {
        let decodes = 3 + random.next(below: 40)
        var pages: [String: Int] = [:]
        for _ in 0..<decodes {
            let point = random.unit()
            var total = 0.0
            let page =
                app.pages.first {
                    total += $0.weight
                    return point < total
                }?.id ?? app.pages[app.pages.count - 1].id
            pages[page, default: 0] += 1
        }
        let page = pages.keys.sorted()[random.next(below: pages.count)]
        if random.chance(app.service == "page-api" ? 0.05 : 0.02) {
            let type = app.service == "page-api" ? TrafficScenario.malformedType : version.registeredTypes[0]
            events.add(
                .malformedPayload, type, "page.sections.Index \(random.next(below: 4)).widgets.Index 0",
                "Missing key 'title'", page: page, count: 1, random: &random)
        }
        if random.chance(0.03) {
            events.add(
                .droppedElement, nil, "page.sections.Index \(random.next(below: 4)).widgets.Index 2",
                "Element without a type", page: page, count: 1, random: &random)
        }
        if app.service == "page-api" {
            if version.registeredTypes.contains(TrafficScenario.gatedType), pages["home"] != nil, random.chance(0.02) {
                events.add(
                    .duplicateID, TrafficScenario.gatedType, "page.header.Index 0", "Duplicate id 'ring-1'",
                    page: "home", count: 1, random: &random)
            }
            if pages[TrafficScenario.duplicatePage] != nil, random.chance(0.3) {
                events.add(
                    .duplicateID, TrafficScenario.duplicateType, "page.sections.Index 0.widgets.Index 3",
                    "Duplicate id 'grid-3'", page: TrafficScenario.duplicatePage, count: 1, random: &random)
            }
            // The earlier episode: page-api sent the ungated type for an hour, to every version but the newest.
            if let episode = scenario.earlierEpisode, episode.contains(events.moment.at), let home = pages["home"],
                !version.registeredTypes.contains(TrafficScenario.ungatedType)
            {
                events.add(
                    .unknownType, TrafficScenario.ungatedType, "page.sections.Index 0.widgets.Index 1",
                    "Unknown widget type '\(TrafficScenario.ungatedType)'", page: "home", count: home, random: &random)
            }
        }
        if isNewest, random.chance(0.03) {
            events.add(
                DiagnosticKind(rawValue: "unknownArrangement")!, "carousel_v2", "page.sections.Index 1",
                "Unknown arrangement 'masonry'", page: page, count: 1, random: &random)
        }
        if isDebug, random.chance(0.5) {
            events.add(
                .unknownType, TrafficScenario.debugOnlyType, "page.sections.Index 0.widgets.Index 0",
                "Unknown widget type '\(TrafficScenario.debugOnlyType)'", page: page,
                count: 1 + random.next(below: 5), random: &random)
        }
        return decodes
    }

    /// A record's events as its SDK pre-aggregates them: one event per kind, type, path, message and page, its
    /// `count` the sum, at the record's moment and serving release.
    private struct Aggregate {
        /// The record's moment and the release serving then.
        let moment: (at: Int64, release: String)
        var events: [DiagnosticEvent] = []
        private var positions: [String: Int] = [:]

        init(moment: (at: Int64, release: String)) {
            self.moment = moment
        }

        mutating func add(
            _ kind: DiagnosticKind, _ type: String?, _ path: String, _ message: String, page: String, count: Int,
            random: inout SimulationRandom
        ) {
            let key = "\(kind.rawValue)|\(type ?? "")|\(path)|\(message)|\(page)"
            if let position = positions[key] {
                events[position].count += max(1, count)
                return
            }
            positions[key] = events.count
            events.append(
                DiagnosticEvent(
                    kind: kind, widgetType: type, codingPath: path, message: message, pageID: page,
                    surface: random.chance(0.8) ? "page" : "sheet",
                    backendRelease: random.chance(0.9) ? moment.release : nil, count: max(1, count),
                    occurredAt: Timestamp(
                        secondsSinceEpoch: moment.at, nanoseconds: Int32(random.next(below: 1000)) * 1_000_000)))
        }
    }

    /// The records of `batches` for `topic`, as the collector writes them (docs/api.md#kafka-topics): key, value parts,
    /// headers.
    func records(of batches: [Batch], topic: String, collector: String, maxRecordBytes: Int) -> [KafkaProducerMessage] {
        let hasher = InstallIDHasher(salt: salt)
        var messages: [KafkaProducerMessage] = []
        messages.reserveCapacity(batches.count)
        for planned in batches {
            let batch = planned.batch
            var client = batch.client
            client.installID = nil
            let fields = BatchRecordWriter.Batch(
                batchID: batch.id ?? UUID().uuidString, client: client,
                installHash: batch.client.installID.map { hasher.pseudonym(for: $0) }, decodes: batch.decodes,
                clientReport: nil, receivedAt: Timestamp(secondsSinceEpoch: planned.receivedAt), skewMillis: 0,
                collector: collector, dropped: 0)
            let table = EventTable(batch.events)
            let writer = BatchRecordWriter(
                batch: fields, table: table, positions: Array(0..<table.count), maxRecordBytes: maxRecordBytes)
            let headers =
                KafkaHeader.json(schema: topic) + [
                    KafkaHeader(name: "app-id", value: Array(client.appID.utf8)),
                    KafkaHeader(name: "app-version", value: Array(client.appVersion.utf8)),
                    KafkaHeader(name: "platform", value: Array(client.platform.utf8)),
                    KafkaHeader(name: "events", value: Array(String(table.count).utf8)),
                ]
            for part in writer.parts.indices {
                let value = [UInt8](unsafeUninitializedCapacity: writer.maxLength(part: part)) { buffer, count in
                    count = writer.write(part: part, into: UnsafeMutableRawBufferPointer(buffer))
                }
                messages.append(
                    KafkaProducerMessage(topic: topic, key: writer.keyBytes, value: value, headers: headers))
            }
        }
        return messages
    }

    static func logOdds(_ share: Double) -> Double { log(share / (1 - share)) }
    static func logistic(_ value: Double) -> Double { 1 / (1 + exp(-value)) }
}
