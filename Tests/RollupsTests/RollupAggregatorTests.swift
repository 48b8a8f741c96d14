import Dispatch
import FlowmeterModels
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Rollups

@Suite struct RollupAggregatorTests {
    static let base: Int64 = 1_764_493_140
    static let client = ClientInfo(
        appID: "com.example.shop", appVersion: "5.2.1", platform: "ios", buildConfiguration: .release,
        capabilities: Capabilities(maxSchemaVersion: 7, registeredTypes: ["title_block", "image_text_card"]))

    static func event(
        _ type: String?, second: Int64, count: Int = 1, release: String? = nil, kind: DiagnosticKind = .unknownType
    ) -> DiagnosticEvent {
        DiagnosticEvent(
            kind: kind, widgetType: type, codingPath: "page.sections.Index \(second % 7).widgets.Index 1",
            message: "Unknown widget type", pageID: "home", backendRelease: release, count: count,
            occurredAt: Timestamp(secondsSinceEpoch: base + second))
    }

    /// The series rollup one event alone makes, without an install.
    static func single(_ event: DiagnosticEvent) -> SeriesRollup {
        SeriesRollup(
            series: RollupSeries(
                version: VersionKey(client: client), kind: event.kind, widgetType: event.widgetType),
            window: MinuteWindow(containing: event.occurredAt), events: Int64(event.count),
            installs: HyperLogLog(), firstSeen: event.occurredAt, lastSeen: event.occurredAt,
            releases: event.backendRelease.map { [$0: Int64(event.count)] } ?? [:],
            samples: [RollupSample(codingPath: event.codingPath, message: event.message, pageID: event.pageID)])
    }

    /// Records `batch` and merges each of its events, alone, into `expected` under the key `key` gives its rollup:
    /// what the aggregator's rollups must equal.
    static func record(
        _ batch: [DiagnosticEvent], in aggregator: RollupAggregator, expecting expected: inout [String: SeriesRollup],
        key: (SeriesRollup) -> String
    ) {
        aggregator.record(
            batch, client: client, decodes: nil, installHash: nil, receivedAt: Timestamp(secondsSinceEpoch: base))
        for event in batch {
            let alone = Self.single(event)
            let name = key(alone)
            if expected[name] != nil { expected[name]!.merge(alone) } else { expected[name] = alone }
        }
    }

    func seriesRollups(_ partials: [PartialRollup]) -> [SeriesRollup] {
        partials.compactMap { if case .series(let rollup) = $0.rollup { rollup } else { nil } }
    }

    func versionRollups(_ partials: [PartialRollup]) -> [VersionRollup] {
        partials.compactMap { if case .version(let rollup) = $0.rollup { rollup } else { nil } }
    }

    @Test func recordedEventsComeOutPerSeriesAndMinute() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "collector-a", bootID: "b00t"))
        let events = [
            Self.event("hologram", second: 5, count: 2, release: "page-api@2"),
            Self.event("hologram", second: 59, release: "page-api@1"),
            Self.event("hologram", second: 60),
            Self.event(nil, second: 10, kind: .droppedElement),
        ]
        aggregator.record(
            events, client: Self.client, decodes: 132, installHash: "0123456789abcdef0123456789abcdef",
            receivedAt: Timestamp(secondsSinceEpoch: Self.base + 200))
        let partials = aggregator.drain()
        #expect(partials.map(\.id) == (0..<4).map { "collector-a-b00t/0/\($0)" })
        #expect(partials.allSatisfy { $0.collector == "collector-a" })
        let series = seriesRollups(partials)
        #expect(series.count == 3)
        let first = try #require(series.first { $0.series.widgetType == "hologram" && $0.window.start == Self.base })
        #expect(first.events == 3)
        #expect(first.installs.count == 1)
        #expect(first.firstSeen == Timestamp(secondsSinceEpoch: Self.base + 5))
        #expect(first.lastSeen == Timestamp(secondsSinceEpoch: Self.base + 59))
        #expect(first.releases == ["page-api@2": 2, "page-api@1": 1])
        #expect(first.samples.allSatisfy { $0.codingPath == "page.sections.Index *.widgets.Index *" })
        #expect(series.contains { $0.series.widgetType == "hologram" && $0.window.start == Self.base + 60 })
        #expect(series.contains { $0.series.widgetType == "" && $0.series.kind == .droppedElement })
        let version = try #require(versionRollups(partials).first)
        #expect(version.key == VersionKey(client: Self.client))
        #expect(version.window.start == Self.base + 180)
        #expect(version.batches == 1 && version.cleanBatches == 0 && version.decodes == 132)
        #expect(version.registeredTypes == ["title_block", "image_text_card"])
        #expect(version.maxSchemaVersion == 7)
        #expect(aggregator.drain().isEmpty)
    }

    @Test func clockSkewMovesEventsToTheirCorrectedMinute() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c"))
        aggregator.record(
            [Self.event("t", second: 30)], client: Self.client, decodes: nil, installHash: nil,
            receivedAt: Timestamp(secondsSinceEpoch: Self.base), clockSkew: .seconds(45))
        let rollup = try #require(seriesRollups(aggregator.drain()).first)
        #expect(rollup.window.start == Self.base + 60)
        #expect(rollup.firstSeen == Timestamp(secondsSinceEpoch: Self.base + 75))
        #expect(rollup.installs.isEmpty)
    }

    @Test func cleanBatchesHaveNoAcceptedAndNoDroppedEvents() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c"))
        let at = Timestamp(secondsSinceEpoch: Self.base)
        aggregator.record([], client: Self.client, decodes: 10, installHash: "aa", receivedAt: at)
        aggregator.record([], client: Self.client, decodes: 10, installHash: "bb", receivedAt: at, droppedEvents: 1)
        aggregator.record(
            [Self.event("t", second: 1)], client: Self.client, decodes: 5, installHash: "aa", receivedAt: at)
        let version = try #require(versionRollups(aggregator.drain()).first)
        #expect(version.batches == 3 && version.cleanBatches == 1 && version.decodes == 25)
        #expect(version.installs.count == 2)
    }

    /// Each batch counts, with all its decodes, once per service its events' releases name: for the release of that
    /// service carrying most of its events (ties by name); clean batches, batches without a release and the later
    /// parts of a split batch are attributed to none.
    @Test func batchesAndDecodesAreAttributedPerServiceToTheReleaseMostOfTheirEventsCarry() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c"))
        let at = Timestamp(secondsSinceEpoch: Self.base)
        let stable = "page-api@1"
        let canary = "page-api@2"
        let search = "search-api@7"
        aggregator.record([], client: Self.client, decodes: 50, installHash: "a", receivedAt: at)
        aggregator.record(
            [Self.event("t", second: 1, release: stable)], client: Self.client, decodes: 10, installHash: "b",
            receivedAt: at)
        aggregator.record(
            [
                Self.event("t", second: 1, count: 2, release: canary), Self.event("u", second: 2, release: stable),
                Self.event("v", second: 3, release: search),
            ], client: Self.client, decodes: 7, installHash: "c", receivedAt: at)
        // A tie within page-api: the first name wins.
        aggregator.record(
            [Self.event("t", second: 1, release: canary), Self.event("u", second: 2, release: stable)],
            client: Self.client, decodes: 3, installHash: "d", receivedAt: at)
        aggregator.record(
            [Self.event("t", second: 4)], client: Self.client, decodes: 5, installHash: "e", receivedAt: at)
        aggregator.record(
            [Self.event("t", second: 5, release: canary)], client: Self.client, decodes: 100, installHash: "c",
            receivedAt: at, isContinuation: true)
        let version = try #require(versionRollups(aggregator.drain()).first)
        #expect(version.batches == 5 && version.decodes == 75)
        #expect(
            version.releases == [
                stable: VersionReleaseTraffic(batches: 2, decodes: 13),
                canary: VersionReleaseTraffic(batches: 1, decodes: 7),
                search: VersionReleaseTraffic(batches: 1, decodes: 7),
            ])
        var merged = version
        merged.merge(version)
        #expect(merged.releases[stable] == VersionReleaseTraffic(batches: 4, decodes: 26))
    }

    /// Each batch counts once for the build it names (`client.build`), in its minute; a batch without a build and the
    /// later parts of a split batch count for none; a rollup keeps the newest builds past the bound.
    @Test func theBuildsThatSentEachVersionsBatchesAreKept() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c"))
        let at = Timestamp(secondsSinceEpoch: Self.base)
        var build5210 = Self.client
        build5210.build = "5210"
        var build5211 = Self.client
        build5211.build = "5211"
        aggregator.record([], client: build5210, decodes: 3, installHash: "a", receivedAt: at)
        aggregator.record(
            [Self.event("t", second: 1)], client: build5210, decodes: 4, installHash: "b",
            receivedAt: Timestamp(secondsSinceEpoch: Self.base + 30))
        aggregator.record(
            [Self.event("t", second: 2)], client: build5210, decodes: 4, installHash: "b", receivedAt: at,
            isContinuation: true)
        aggregator.record([], client: Self.client, decodes: 1, installHash: "c", receivedAt: at)
        aggregator.record(
            [], client: build5211, decodes: 1, installHash: "d",
            receivedAt: Timestamp(secondsSinceEpoch: Self.base + 60))
        let rollups = versionRollups(aggregator.drain()).sorted { $0.window < $1.window }
        try #require(rollups.count == 2)
        #expect(rollups[0].batches == 3)
        #expect(rollups[0].builds == ["5210": VersionBuildTraffic(batches: 2, lastSeen: Self.base)])
        #expect(rollups[1].builds == ["5211": VersionBuildTraffic(batches: 1, lastSeen: Self.base + 60)])
        // An hour merges its minutes: batches add, the later minute stays.
        var hour = rollups[0]
        hour.window = rollups[1].window
        hour.merge(rollups[1])
        var earlier = rollups[0]
        earlier.window = rollups[1].window
        earlier.builds["5211"] = VersionBuildTraffic(batches: 2, lastSeen: Self.base - 60)
        hour.merge(earlier)
        #expect(
            hour.builds == [
                "5210": VersionBuildTraffic(batches: 4, lastSeen: Self.base),
                "5211": VersionBuildTraffic(batches: 3, lastSeen: Self.base + 60),
            ])
        #expect(VersionBuildTraffic.newest(hour.builds) == "5211")

        // Past the bound, the builds seen last stay (then the larger build number).
        var many = VersionRollup(key: rollups[0].key, window: rollups[1].window)
        for number in 0..<(VersionBuildTraffic.maxBuilds + 4) {
            var other = VersionRollup(key: many.key, window: many.window)
            other.builds["\(6000 + number)"] = VersionBuildTraffic(
                batches: 1, lastSeen: Self.base + 60 * Int64(number % 2 == 0 ? 1 : -(number % 5)))
            many.merge(other)
        }
        #expect(many.builds.count == VersionBuildTraffic.maxBuilds)
        let even = (0..<(VersionBuildTraffic.maxBuilds + 4)).filter { $0 % 2 == 0 }.map { "\(6000 + $0)" }
        #expect(Set(even).isSubset(of: Set(many.builds.keys)))
        #expect(VersionBuildTraffic.newest(many.builds) == "\(6000 + VersionBuildTraffic.maxBuilds + 2)")
        many.count(build: "7000")
        #expect(many.builds["7000"] == VersionBuildTraffic(batches: 1, lastSeen: Self.base + 60))
        #expect(many.builds.count == VersionBuildTraffic.maxBuilds)
    }

    /// One build over the bound (what counting a batch of a new build leaves) drops the oldest build found in one
    /// pass; it keeps the same builds as cutting the sorted list, whatever the minutes, numbers and spellings.
    @Test(arguments: 0..<50)
    func oneBuildOverTheBoundKeepsWhatSortingKeeps(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        var builds: [String: VersionBuildTraffic] = [:]
        let spellings = ["", "a", "5210", "05210", "5210.1", "5211", "6000", "6000-beta", "10", "9"]
        while builds.count < VersionBuildTraffic.maxBuilds + 1 {
            let build = spellings[Int(random.next() % UInt64(spellings.count))] + String(random.next() % 40)
            builds[build] = VersionBuildTraffic(
                batches: Int64(random.next() % 3), lastSeen: Self.base + 60 * Int64(random.next() % 3))
        }
        let sorted = builds.map { (build: $0.key, traffic: $0.value) }.sorted(by: VersionBuildTraffic.isNewer)
        let expected = Dictionary(
            uniqueKeysWithValues: sorted.prefix(VersionBuildTraffic.maxBuilds).map { ($0.build, $0.traffic) })
        #expect(VersionBuildTraffic.bounded(builds) == expected)
    }

    @Test func clientReportTotalsAddUpInTheVersionRollup() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c"))
        let at = Timestamp(secondsSinceEpoch: Self.base)
        aggregator.record([], client: Self.client, decodes: 1, installHash: "aa", receivedAt: at, clientDiscarded: 12)
        aggregator.record(
            [Self.event("t", second: 1)], client: Self.client, decodes: 1, installHash: "bb", receivedAt: at,
            clientDiscarded: 3)
        aggregator.record([], client: Self.client, decodes: 1, installHash: "cc", receivedAt: at)
        let version = try #require(versionRollups(aggregator.drain()).first)
        #expect(version.clientDiscarded == 15)
        #expect(version.batches == 3)
        var merged = version
        merged.merge(version)
        #expect(merged.clientDiscarded == 30)
    }

    @Test func eightThreadsSumExactlyAcrossInterleavedDrains() {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 4))
        let drained = Mutex<[PartialRollup]>([])
        let threads = 8
        let batchesPerThread = 400
        DispatchQueue.concurrentPerform(iterations: threads + 1) { worker in
            if worker == threads {
                // A flush loop draining while ingest threads record: nothing may be lost or counted twice.
                for _ in 0..<50 { drained.withLock { $0 += aggregator.drain() } }
                return
            }
            var random = SeededGenerator(seed: UInt64(worker))
            for batch in 0..<batchesPerThread {
                let events = (0..<5).map { index in
                    Self.event("type-\(random.next() % 20)", second: Int64(random.next() % 600), count: index + 1)
                }
                aggregator.record(
                    events, client: Self.client, decodes: 1, installHash: random.installHash(),
                    receivedAt: Timestamp(secondsSinceEpoch: Self.base + Int64(batch % 3) * 60))
            }
        }
        drained.withLock { $0 += aggregator.drain() }
        let all = drained.withLock { $0 }
        #expect(Set(all.map(\.id)).count == all.count)
        let events = seriesRollups(all).reduce(Int64(0)) { $0 + $1.events }
        #expect(events == Int64(threads * batchesPerThread * 15))
        let versions = versionRollups(all)
        #expect(versions.reduce(Int64(0)) { $0 + $1.batches } == Int64(threads * batchesPerThread))
        #expect(versions.reduce(Int64(0)) { $0 + $1.decodes } == Int64(threads * batchesPerThread))
        #expect(aggregator.droppedEvents == 0)
    }

    @Test func drainingMatchesMergingEverySingleEvent() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 3))
        var random = SeededGenerator(seed: 5)
        var expected: [String: SeriesRollup] = [:]
        for _ in 0..<300 {
            let install = random.installHash()
            let event = Self.event(
                "t\(random.next() % 4)", second: Int64(random.next() % 180), count: Int(random.next() % 3 + 1),
                release: "api@\(random.next() % 3)")
            aggregator.record(
                [event], client: Self.client, decodes: nil, installHash: install,
                receivedAt: Timestamp(secondsSinceEpoch: Self.base))
            var installs = HyperLogLog()
            installs.insert(installHash: install)
            let single = SeriesRollup(
                series: RollupSeries(
                    version: VersionKey(client: Self.client), kind: event.kind, widgetType: event.widgetType),
                window: MinuteWindow(containing: event.occurredAt), events: Int64(event.count), installs: installs,
                firstSeen: event.occurredAt, lastSeen: event.occurredAt,
                releases: [event.backendRelease!: Int64(event.count)],
                samples: [RollupSample(codingPath: event.codingPath, message: event.message, pageID: event.pageID)])
            let key = "\(single.series.widgetType)|\(single.window.start)"
            if expected[key] != nil { expected[key]!.merge(single) } else { expected[key] = single }
        }
        let actual = seriesRollups(aggregator.drain())
        #expect(actual.count == expected.count)
        for rollup in actual {
            #expect(rollup == expected["\(rollup.series.widgetType)|\(rollup.window.start)"])
        }
    }

    /// Batches of many events (samples that compete for the three places, pages that replace kept ones, more
    /// releases than a rollup keeps) come out exactly as merging every event alone: the aggregator's shortcuts for
    /// repeated releases and settled samples change nothing.
    @Test func batchesMatchMergingEverySingleEventWhateverTheirSamplesAndReleases() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 2))
        var random = SeededGenerator(seed: 11)
        var expected: [String: SeriesRollup] = [:]
        let pages = ["home", "cart", "deals", nil]
        // Places that stay apart once normalized, so samples compete by path, not only by message.
        let places = ["sections", "header", "footer.items", "a", "sections.Index 2.rows"]
        for _ in 0..<60 {
            var batch: [DiagnosticEvent] = []
            for _ in 0..<25 {
                let release = random.next() % 3 == 0 ? nil : "api@\(random.next() % 20)"
                batch.append(
                    DiagnosticEvent(
                        kind: .unknownType, widgetType: "t\(random.next() % 3)",
                        codingPath: random.next() % 6 == 0
                            ? nil
                            : "\(places[Int(random.next() % 5)]).Index \(random.next() % 9).widgets.Index \(random.next() % 4)",
                        message: random.next() % 2 == 0 ? "Missing key 'title'" : "Unknown type",
                        pageID: pages[Int(random.next() % 4)], backendRelease: release,
                        count: Int(random.next() % 3 + 1),
                        occurredAt: Timestamp(secondsSinceEpoch: Self.base + Int64(random.next() % 120))))
            }
            Self.record(batch, in: aggregator, expecting: &expected) { "\($0.series.widgetType)|\($0.window.start)" }
        }
        let actual = seriesRollups(aggregator.drain())
        #expect(actual.count == expected.count)
        for rollup in actual {
            let wanted = try #require(expected["\(rollup.series.widgetType)|\(rollup.window.start)"])
            #expect(rollup.samples == wanted.samples)
            #expect(rollup.releases == wanted.releases)
            #expect(rollup.events == wanted.events)
        }
    }

    /// Batches that interleave kinds, types (and no type) and minutes come out as merging every event alone: each
    /// series sees its own events, in their order, whatever else the batch holds.
    @Test func batchesInterleavingKindsTypesAndMinutesMatchMergingEverySingleEvent() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 1))
        var random = SeededGenerator(seed: 23)
        var expected: [String: SeriesRollup] = [:]
        let kinds: [DiagnosticKind] = [.unknownType, .malformedPayload, .droppedElement]
        for _ in 0..<40 {
            let batch = (0..<50).map { _ in
                let kind = kinds[Int(random.next() % 3)]
                let second = Int64(random.next() % 240)
                return Self.event(
                    kind == .droppedElement ? nil : "t\(random.next() % 5)", second: second,
                    count: Int(random.next() % 4 + 1), release: "api@\(random.next() % 2)", kind: kind)
            }
            Self.record(batch, in: aggregator, expecting: &expected) {
                "\($0.series.kind)|\($0.series.widgetType)|\($0.window.start)"
            }
        }
        let actual = seriesRollups(aggregator.drain())
        #expect(actual.count == expected.count)
        for rollup in actual {
            let wanted = try #require(
                expected["\(rollup.series.kind)|\(rollup.series.widgetType)|\(rollup.window.start)"])
            #expect(rollup == wanted)
        }
    }

    /// One batch of many new types and minutes past the soft cap: every event is in a series (its own or the
    /// overflow) or counted as dropped, none twice.
    @Test func aBatchPastTheSoftCapKeepsEveryEventOnce() {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 1, maxEntries: 8))
        var random = SeededGenerator(seed: 29)
        let batch = (0..<200).map { index in
            Self.event("t\(index % 37)", second: Int64(random.next() % 600), count: Int(random.next() % 3 + 1))
        }
        aggregator.record(
            batch, client: Self.client, decodes: nil, installHash: nil,
            receivedAt: Timestamp(secondsSinceEpoch: Self.base))
        let series = seriesRollups(aggregator.drain())
        #expect(series.count <= 16)
        #expect(series.contains { $0.series.widgetType == RollupAggregator.overflowLabel })
        let total = batch.reduce(0) { $0 + $1.count }
        #expect(series.reduce(0) { $0 + $1.events } + Int64(aggregator.droppedEvents) == Int64(total))
    }

    @Test func overflowingSeriesCountUnderOtherAndMemoryStaysBounded() {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 1, maxEntries: 10))
        let at = Timestamp(secondsSinceEpoch: Self.base)
        for index in 0..<100 {
            aggregator.record(
                [Self.event("random-\(index)", second: 0)], client: Self.client, decodes: nil, installHash: nil,
                receivedAt: at)
        }
        let series = seriesRollups(aggregator.drain())
        #expect(series.count <= 20)
        #expect(series.contains { $0.series.widgetType == RollupAggregator.overflowLabel })
        #expect(series.reduce(0) { $0 + $1.events } == 100)

        // Past twice the cap nothing new is held: events are only counted as dropped.
        for index in 0..<30 {
            var client = Self.client
            client.appVersion = "9.\(index)"
            aggregator.record(
                (0..<30).map { Self.event("t\($0)", second: Int64($0 * 60)) }, client: client, decodes: nil,
                installHash: nil, receivedAt: at)
        }
        let flood = aggregator.drain()
        #expect(flood.count <= 20)
        #expect(seriesRollups(flood).reduce(0) { $0 + $1.events } + Int64(aggregator.droppedEvents) == 900)
    }

    /// A shard holds a bounded number of distinct sample strings between drains: past it (a flood of distinct
    /// messages), an event naming a new one is counted but not sampled, and the next drain starts the table afresh.
    @Test func aFloodOfDistinctMessagesIsCountedButSampledOnlyWithinTheShardsCapacity() throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "c", shardCount: 1, maxEntries: 10))
        let capacity = AggregatorShard.State.sampleNameCapacity(softCap: 10)
        let count = capacity + 200
        let at = Timestamp(secondsSinceEpoch: Self.base)
        // Descending messages: each would take first place among the samples, were it named.
        let flood = (0..<count).map { index in
            DiagnosticEvent(
                kind: .unknownType, widgetType: "t", codingPath: nil, message: Self.message(count - index),
                pageID: nil, count: 1, occurredAt: at)
        }
        aggregator.record(flood, client: Self.client, decodes: nil, installHash: nil, receivedAt: at)
        let first = try #require(seriesRollups(aggregator.drain()).first)
        #expect(first.events == Int64(count))
        // The table's first string is the empty coding path; the messages take the rest, the largest first.
        let lastNamed = count - (capacity - 1) + 1
        #expect(first.samples.map(\.message) == [lastNamed, lastNamed + 1, lastNamed + 2].map(Self.message))

        aggregator.record(
            Array(flood.suffix(3)), client: Self.client, decodes: nil, installHash: nil, receivedAt: at)
        let second = try #require(seriesRollups(aggregator.drain()).first)
        #expect(second.samples.map(\.message) == [1, 2, 3].map(Self.message))
    }

    static func message(_ number: Int) -> String {
        "m" + String(repeating: "0", count: 5 - String(number).count) + String(number)
    }

    @Test func restartedAggregatorsNeverReuseIDs() {
        let first = RollupAggregator(configuration: .init(collectorID: "c"))
        let second = RollupAggregator(configuration: .init(collectorID: "c"))
        #expect(first.instance != second.instance)
        #expect(first.instance.hasPrefix("c-"))
    }
}
