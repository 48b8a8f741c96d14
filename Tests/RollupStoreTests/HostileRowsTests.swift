import FlowmeterModels
import Foundation
import Rollups
import Synchronization
import TestSupport
import Testing

@testable import RollupStore

/// What goes in comes out the same, and one unreadable row never fails a read or stalls a merge (issue 9).
@Suite struct HostileRowsTests {
    /// The nastiest strings an identifier may legally hold, and free text that may hold anything.
    static let nastyIdentifiers = [
        "'; DROP TABLE series; --", "quote\"back\\slash", "😀🇫🇷", "\u{202E}evil\u{202C}", "line\u{2028}sep",
        "e\u{301}\u{301}", "\u{FFFD}", String(repeating: "é", count: 256), "=HYPERLINK(\"x\")", "  padded  ",
        "%s%n%x", "<script>alert(1)</script>", "\u{A0}nbsp",
    ]
    static let nastyText = "nul\u{0}esc\u{1B}[2Jbell\u{7}\r\nc1\u{85}del\u{7F}"

    final class Reports: Sendable {
        let seen = Mutex<[UnreadableRows]>([])
        var all: [UnreadableRows] { seen.withLock { $0 } }
        var options: RollupStoreOptions {
            var options = RollupStoreOptions()
            options.onUnreadableRows = { report in self.seen.withLock { $0.append(report) } }
            return options
        }
    }

    /// Runs `sql` with `values` on a connection of its own, as a hand edit or an older version would.
    static func edit(_ fixture: StoreFixture, _ sql: String, _ values: [SQLValue] = []) throws {
        let database: any SQLDatabase
        switch fixture.kind {
        case .sqlite: database = try SQLiteConnection(path: String(fixture.location.dropFirst("sqlite:".count)))
        case .postgres: database = try PostgresConnection(url: fixture.location)
        case .inMemory: return
        }
        try database.update(sql, values)
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func nastyLegalStringsRoundTrip(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var factory = RollupFactory()
        var rollups: [SeriesRollup] = []
        for (offset, value) in Self.nastyIdentifiers.enumerated() {
            let series = RollupSeries(
                appID: value, platform: value, appVersion: value, buildConfiguration: .release,
                kind: try #require(DiagnosticKind(rawValue: value)), widgetType: value)
            var rollup = RollupFactory.seriesRollup(series, minute: Int64(offset), events: 2, release: value)
            rollup.samples = [RollupSample(codingPath: Self.nastyText, message: Self.nastyText, pageID: value)]
            rollups.append(rollup)
        }
        _ = try fixture.store.apply(factory.partials(rollups.map { .series($0) }))
        let read = try fixture.store.seriesRollups(
            SeriesQuery(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60)))
        #expect(Set(read.map(\.series)) == Set(rollups.map(\.series)))
        #expect(read.sorted { $0.window < $1.window } == rollups)
        for value in Self.nastyIdentifiers {
            let filtered = try fixture.store.seriesRollups(
                SeriesQuery(
                    from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60), appID: value,
                    widgetTypes: [value]))
            #expect(filtered.map(\.series.appID) == [value])
        }
        let marker = DeployMarker(
            id: "d-" + Self.nastyIdentifiers[0], service: Self.nastyIdentifiers[1], version: Self.nastyIdentifiers[2],
            finishedAt: RollupFactory.at(minute: 3), url: Self.nastyText)
        try fixture.store.recordDeploy(marker)
        #expect(
            try fixture.store.deploys(from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60)) == [marker])
    }

    @Test func sqliteBindsTextWithItsByteLength() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-nul")
        let connection = try SQLiteConnection(path: directory.file("t.db"))
        try connection.execute("CREATE TABLE t (value TEXT NOT NULL)")
        let value = "before\u{0}after\u{0}"
        _ = try connection.update("INSERT INTO t (value) VALUES ($1)", [.text(value)])
        var read: [String] = []
        try connection.query("SELECT value FROM t WHERE value = $1", [.text(value)]) { row in
            read.append(try row.text(0))
        }
        #expect(read == [value])
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func unreadableRowsAreSkippedCountedAndReported(kind: StoreKind) throws {
        let reports = Reports()
        let fixture = try StoreFixture(kind, options: reports.options)
        var factory = RollupFactory()
        let good = RollupFactory.series(widget: "good")
        let badKind = RollupFactory.series(widget: "bad_kind")
        let badSketch = RollupFactory.series(widget: "bad_sketch")
        let version = RollupFactory.versionKey(version: "1.0")
        let badVersion = RollupFactory.versionKey(version: "2.0")
        _ = try fixture.store.apply(
            factory.partials(
                [good, badKind, badSketch].map { .series(RollupFactory.seriesRollup($0, minute: 1, events: 3)) }
                    + [version, badVersion].map {
                        .version(RollupFactory.versionRollup($0, minute: 1, batches: 4, decodes: 8, types: ["a"]))
                    }))
        try fixture.store.recordDeploy(
            DeployMarker(id: "d1", service: "api", version: "1", finishedAt: RollupFactory.at(minute: 2)))
        try fixture.store.recordDeploy(
            DeployMarker(id: "d2", service: "api", version: "2", finishedAt: RollupFactory.at(minute: 3)))

        // What the issue found (a kind that came back as ''), a sketch that no longer decodes, a build
        // configuration no version knows, and a deploy marker that is not JSON.
        try Self.edit(fixture, "UPDATE series SET kind = '' WHERE widget_type = 'bad_kind'")
        try Self.edit(
            fixture,
            "UPDATE series_minutes SET installs = $1 WHERE series_id = (SELECT id FROM series WHERE widget_type = 'bad_sketch')",
            [.blob([0xFF, 0x00])])
        try Self.edit(fixture, "UPDATE versions SET build_configuration = 'weird' WHERE app_version = '2.0'")
        try Self.edit(fixture, "UPDATE deploys SET marker = $1 WHERE id = 'd2'", [.blob(Array("{not json".utf8))])

        let window = (from: RollupFactory.at(minute: 0), to: RollupFactory.at(minute: 60))
        let rollups = try fixture.store.seriesRollups(SeriesQuery(from: window.from, to: window.to))
        #expect(rollups.map(\.series) == [good])
        let buckets = try fixture.store.seriesBuckets(
            SeriesQuery(from: window.from, to: window.to), bucketSeconds: 3600)
        #expect(Set(buckets.map(\.series)) == [good, badSketch])
        let versions = try fixture.store.versionRollups(from: window.from, to: window.to, appID: nil)
        #expect(versions.map(\.key) == [version])
        let versionBuckets = try fixture.store.versionBuckets(
            from: window.from, to: window.to, appID: nil, bucketSeconds: 3600)
        #expect(versionBuckets.map(\.key) == [version])
        #expect(try fixture.store.deploys(from: window.from, to: window.to).map(\.id) == ["d1"])

        let seen = reports.all
        #expect(seen.map(\.table).contains("series_minutes"))
        #expect(seen.map(\.table).contains("series"))
        #expect(seen.map(\.table).contains("version_minutes"))
        #expect(seen.map(\.table).contains("deploys"))
        #expect(seen.allSatisfy { $0.count >= 1 && !$0.firstProblem.isEmpty })
        // Values from the bad row are quoted, never printed raw.
        #expect(seen.contains { $0.firstProblem.contains("kind \"\"") })

        // The sink merging into the unreadable minute row replaces it instead of failing the transaction.
        let before = reports.all.count
        let again = RollupFactory.seriesRollup(badSketch, minute: 1, events: 5)
        #expect(try fixture.store.apply(factory.partials([.series(again)])).applied == 1)
        #expect(reports.all.count > before)
        let repaired = try fixture.store.seriesRollups(
            SeriesQuery(from: window.from, to: window.to, widgetTypes: ["bad_sketch"]))
        #expect(repaired.map(\.events) == [5])
    }
}
