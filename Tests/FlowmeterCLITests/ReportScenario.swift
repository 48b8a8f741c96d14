import FlowmeterModels
import RollupStore
import Rollups
import TestSupport

/// Two weeks of rollups (2026-W47 and 2026-W48) in a temporary SQLite store, with known answers:
///
/// - `hologram_projector`: new ungated type in W48 on 5.2.1 (1,200 events from 30 installs on Wednesday 10:00–10:29,
///   release `page-api@2026.11.25-1` deployed at 09:58), rendered by 5.3.0: gate at 5.3.0; spikes after the deploy.
/// - `promo_banner_v2`: ungated both weeks (50 then 30 events), days apart: regressed, gate at 5.3.0.
/// - `countdown_timer`: ungated in W47 (60 events), 3 events in W48: resolved.
/// - `imgae_text_card`: reported unknown by both versions (25 events each): typo of the registered `image_text_card`.
/// - a hostile type `<script>alert("x")</script>` that no version renders (22 events), with hostile messages and
///   page ids.
/// - malformed `image_text_card` (20 events, "Missing key 'imageURL'" at one normalized path), `title_block`
///   (8 events, a type mismatch at `page.header`) and the hostile type (2 events, hostile message); duplicate ids on
///   pages `home` (12), `search` (4) and a hostile page (1); 7 dropped elements without a type; debug-build noise
///   that must never count.
struct ReportScenario {
    static let hostileType = #"<script>alert("x")</script>"#
    static let hostileMessage = #"<img src=x onerror=alert(1)> & "quotes" | pipes `ticks`"#
    static let hostilePage = "</td><script>evil()</script>"
    static let app = "com.example.shop"
    /// 2026-11-16T00:00:00Z, Monday of W47.
    static let w47: Int64 = 1_794_787_200
    /// 2026-11-23T00:00:00Z, Monday of W48.
    static let w48: Int64 = w47 + 7 * 86_400
    static let hologramDeploy = DeployMarker(
        id: "deploy-holo", service: "page-api", version: "2026.11.25-1", environment: "production",
        startedAt: Timestamp(secondsSinceEpoch: w48 + 2 * 86_400 + 9 * 3600 + 50 * 60),
        finishedAt: Timestamp(secondsSinceEpoch: w48 + 2 * 86_400 + 9 * 3600 + 58 * 60), commit: "9f2c1ab", url: nil)
    static let quietDeploy = DeployMarker(
        id: "deploy-quiet", service: "search-api", version: "2026.11.27-3", environment: "production",
        startedAt: nil, finishedAt: Timestamp(secondsSinceEpoch: w48 + 4 * 86_400 + 16 * 3600), commit: nil, url: nil)
    static let lastWeekDeploy = DeployMarker(
        id: "deploy-w47", service: "page-api", version: "2026.11.17-1", environment: "production", startedAt: nil,
        finishedAt: Timestamp(secondsSinceEpoch: w47 + 86_400 + 12 * 3600), commit: nil, url: nil)

    let directory: TemporaryDirectory
    let store: any RollupStore
    private var partials: [PartialRollup] = []

    /// Creates the store and applies every rollup and deploy.
    static func make() throws -> ReportScenario {
        var scenario = try ReportScenario()
        scenario.seed()
        _ = try scenario.store.apply(scenario.partials)
        for deploy in [hologramDeploy, quietDeploy, lastWeekDeploy] { try scenario.store.recordDeploy(deploy) }
        return scenario
    }

    private init() throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-report")
        store = try openRollupStore(url: directory.file("report.sqlite"))
    }

    var storePath: String { directory.file("report.sqlite") }

    static let older: Set<String> = ["title_block", "image_text_card"]
    static let newer: Set<String> = [
        "title_block", "image_text_card", "hologram_projector", "promo_banner_v2", "countdown_timer",
    ]

    private static func installs(_ prefix: String, _ range: Range<Int>) -> HyperLogLog {
        var sketch = HyperLogLog()
        for index in range { sketch.insert(installHash: "\(prefix)-\(index)") }
        return sketch
    }

    /// Seconds since the epoch of `day` (0 = Monday) at `hour:minute` in the week starting at `week`.
    static func at(_ week: Int64, day: Int64, _ hour: Int64, _ minute: Int64 = 0) -> Int64 {
        week + day * 86_400 + hour * 3600 + minute * 60
    }

    private mutating func add(_ rollup: PartialRollup.Rollup) {
        partials.append(PartialRollup(id: "scenario/1/\(partials.count)", collector: "scenario", rollup: rollup))
    }

    private mutating func version(
        _ appVersion: String, at start: Int64, batches: Int64, clean: Int64, installs: HyperLogLog,
        types: Set<String>, configuration: BuildConfiguration = .release
    ) {
        let key = VersionKey(
            appID: Self.app, platform: "ios", appVersion: appVersion, buildConfiguration: configuration)
        add(
            .version(
                VersionRollup(
                    key: key, window: MinuteWindow(start: start), batches: batches, cleanBatches: clean,
                    decodes: batches * 10, installs: installs, registeredTypes: types, maxSchemaVersion: 7)))
    }

    private mutating func series(
        _ kind: DiagnosticKind, _ widgetType: String, version: String, at start: Int64, events: Int64,
        installs: HyperLogLog, release: String? = nil, samples: [RollupSample] = [],
        configuration: BuildConfiguration = .release
    ) {
        let series = RollupSeries(
            appID: Self.app, platform: "ios", appVersion: version, buildConfiguration: configuration, kind: kind,
            widgetType: widgetType)
        add(
            .series(
                SeriesRollup(
                    series: series, window: MinuteWindow(start: start), events: events, installs: installs,
                    firstSeen: Timestamp(secondsSinceEpoch: start + 5),
                    lastSeen: Timestamp(secondsSinceEpoch: start + 50),
                    releases: release.map { [$0: events] } ?? [:], samples: samples)))
    }

    private static func unknown(_ type: String, page: String = "home") -> [RollupSample] {
        [
            RollupSample(
                codingPath: "page.sections.Index 0.widgets.Index 4", message: "Unknown widget type '\(type)'",
                pageID: page)
        ]
    }

    private mutating func seed() {
        let w47 = Self.w47
        let w48 = Self.w48
        // W47 traffic: 5.2.1 from 100 installs, 5.3.0 from 20.
        version(
            "5.2.1", at: Self.at(w47, day: 2, 10), batches: 1000, clean: 950, installs: Self.installs("a", 0..<100),
            types: Self.older)
        version(
            "5.3.0", at: Self.at(w47, day: 2, 10), batches: 200, clean: 198, installs: Self.installs("b", 0..<20),
            types: Self.newer)
        series(
            .unknownType, "promo_banner_v2", version: "5.2.1", at: Self.at(w47, day: 2, 10), events: 50,
            installs: Self.installs("a", 0..<10), samples: Self.unknown("promo_banner_v2"))
        series(
            .unknownType, "countdown_timer", version: "5.2.1", at: Self.at(w47, day: 3, 9), events: 60,
            installs: Self.installs("a", 0..<10), samples: Self.unknown("countdown_timer"))
        series(
            .malformedPayload, "title_block", version: "5.2.1", at: Self.at(w47, day: 4, 9), events: 10,
            installs: Self.installs("a", 0..<1),
            samples: [RollupSample(codingPath: "page.header", message: "Missing key 'title'", pageID: "home")])

        // W48 traffic: every 5 minutes on Wednesday 08:00–10:55; 5.2.1 from 60 installs, 5.3.0 from 140.
        for step in Int64(0)..<36 {
            let start = Self.at(w48, day: 2, 8) + step * 300
            version("5.2.1", at: start, batches: 20, clean: 18, installs: Self.installs("a", 0..<60), types: Self.older)
            version(
                "5.3.0", at: start, batches: 40, clean: 39, installs: Self.installs("b", 0..<140), types: Self.newer)
        }
        // A debug build of a newer version, sending the new type: never counted.
        version(
            "5.4.0", at: Self.at(w48, day: 2, 10), batches: 500, clean: 0, installs: Self.installs("d", 0..<3),
            types: [], configuration: .debug)
        series(
            .unknownType, "hologram_projector", version: "5.4.0", at: Self.at(w48, day: 2, 10), events: 500,
            installs: Self.installs("d", 0..<3), configuration: .debug)

        // hologram_projector: 30 minutes of 40 events from installs a-0..a-29 after the 09:58 deploy.
        for minute in Int64(0)..<30 {
            series(
                .unknownType, "hologram_projector", version: "5.2.1", at: Self.at(w48, day: 2, 10, minute), events: 40,
                installs: Self.installs("a", 0..<30), release: "page-api@2026.11.25-1",
                samples: Self.unknown("hologram_projector"))
        }
        series(
            .unknownType, "promo_banner_v2", version: "5.2.1", at: Self.at(w48, day: 1, 12), events: 30,
            installs: Self.installs("a", 0..<10), samples: Self.unknown("promo_banner_v2"))
        series(
            .unknownType, "countdown_timer", version: "5.2.1", at: Self.at(w48, day: 0, 9), events: 3,
            installs: Self.installs("a", 0..<1), samples: Self.unknown("countdown_timer"))
        for (appVersion, prefix) in [("5.2.1", "a"), ("5.3.0", "b")] {
            series(
                .unknownType, "imgae_text_card", version: appVersion, at: Self.at(w48, day: 3, 14), events: 25,
                installs: Self.installs(prefix, 0..<6), samples: Self.unknown("imgae_text_card"))
        }
        series(
            .unknownType, Self.hostileType, version: "5.3.0", at: Self.at(w48, day: 4, 9, 40), events: 22,
            installs: Self.installs("b", 0..<6),
            samples: [
                RollupSample(
                    codingPath: "page.sections.Index 1", message: Self.hostileMessage, pageID: Self.hostilePage)
            ])

        // Malformed payloads: image_text_card misses imageURL at one normalized path (two positions), title_block
        // has a type mismatch.
        series(
            .malformedPayload, "image_text_card", version: "5.2.1", at: Self.at(w48, day: 1, 11), events: 15,
            installs: Self.installs("a", 0..<4),
            samples: [
                RollupSample(
                    codingPath: "page.sections.Index 2.widgets.Index 0", message: "Missing key 'imageURL'",
                    pageID: "home")
            ])
        series(
            .malformedPayload, "image_text_card", version: "5.2.1", at: Self.at(w48, day: 3, 11), events: 5,
            installs: Self.installs("a", 0..<4),
            samples: [
                RollupSample(
                    codingPath: "page.sections.Index 5.widgets.Index 1", message: "Missing key 'imageURL'",
                    pageID: "deals")
            ])
        series(
            .malformedPayload, "title_block", version: "5.2.1", at: Self.at(w48, day: 3, 12), events: 8,
            installs: Self.installs("a", 0..<1),
            samples: [
                RollupSample(
                    codingPath: "page.header", message: "Expected String for 'title' but found number", pageID: "home")
            ])

        series(
            .malformedPayload, Self.hostileType, version: "5.3.0", at: Self.at(w48, day: 4, 9, 41), events: 2,
            installs: Self.installs("b", 0..<1),
            samples: [
                RollupSample(
                    codingPath: "page.sections.Index 1", message: Self.hostileMessage, pageID: Self.hostilePage)
            ])

        // Duplicate ids and dropped elements.
        series(
            .duplicateID, "image_text_card", version: "5.3.0", at: Self.at(w48, day: 4, 13), events: 12,
            installs: Self.installs("b", 0..<3),
            samples: [
                RollupSample(
                    codingPath: "page.sections.Index 0.widgets.Index 3",
                    message: "Duplicate id 'hero' renamed to 'hero-1'", pageID: "home")
            ])
        series(
            .duplicateID, "title_block", version: "5.3.0", at: Self.at(w48, day: 5, 13), events: 4,
            installs: Self.installs("b", 0..<2),
            samples: [
                RollupSample(
                    codingPath: "page.header", message: "Duplicate id 'title' renamed to 'title-1'", pageID: "search")
            ])
        series(
            .duplicateID, "title_block", version: "5.3.0", at: Self.at(w48, day: 5, 14), events: 1,
            installs: Self.installs("b", 0..<1),
            samples: [RollupSample(codingPath: "page.header", message: Self.hostileMessage, pageID: Self.hostilePage)])
        series(
            .droppedElement, "", version: "5.3.0", at: Self.at(w48, day: 6, 20), events: 7,
            installs: Self.installs("b", 0..<2))
    }
}
