import FlowmeterModels
import TestSupport
import Testing

@testable import Rollups

/// The drain's ordering of series rollups (`RollupAggregator.sortByWindowAndSeries`), which ranks builds, kinds and
/// types once and moves the rollups by swaps: it must give exactly the order of sorting by window, then by
/// `RollupSeries`' comparison.
@Suite struct DrainOrderTests {
    static let versions = [
        VersionKey(appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release),
        VersionKey(appID: "com.example.shop", platform: "ios", appVersion: "5.10.0", buildConfiguration: .release),
        VersionKey(appID: "com.example.shop", platform: "android", appVersion: "5.2.1", buildConfiguration: .debug),
        VersionKey(appID: "com.example.news", platform: "ios", appVersion: "1.0", buildConfiguration: .release),
        VersionKey(
            appID: "com.example.a-much-longer-app-id", platform: "ios", appVersion: "1.0", buildConfiguration: .release),
    ]
    static let kinds: [DiagnosticKind] = [.unknownType, .malformedPayload, .droppedElement, .duplicateID]
    // Non-ASCII and prefix pairs: the order is by UTF-8 bytes, as `RollupSeries` compares.
    static let types = ["", "title_block", "title", "Title", "é_card", "hologram_projector_with_a_long_name", "z"]

    /// Rollups in a scrambled order, with runs of neighbours that share a build, kind or type (as a drain gives them)
    /// and neighbours that do not.
    static func scrambled(count: Int, seed: UInt64) -> [SeriesRollup] {
        var random = SeededGenerator(seed: seed)
        func next(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        var rollups: [SeriesRollup] = []
        var version = versions[0]
        for _ in 0..<count {
            if next(4) == 0 { version = versions[next(versions.count)] }
            let time = Timestamp(secondsSinceEpoch: 1_764_493_140 + Int64(next(4)) * 60)
            rollups.append(
                SeriesRollup(
                    series: RollupSeries(
                        version: version, kind: kinds[next(kinds.count)], widgetType: types[next(types.count)]),
                    window: MinuteWindow(containing: time), events: Int64(next(100) + 1), firstSeen: time,
                    lastSeen: time))
        }
        return rollups
    }

    static func expectedOrder(_ rollups: [SeriesRollup]) -> [SeriesRollup] {
        rollups.sorted { $0.window != $1.window ? $0.window < $1.window : $0.series < $1.series }
    }

    @Test(arguments: [0, 1, 2, 3, 50, 400])
    func ordersAsTheSeriesComparisonDoes(count: Int) {
        for seed in UInt64(1)...5 {
            let rollups = Self.scrambled(count: count, seed: seed)
            // Series repeat across windows and builds in these sets, and equal keys may come in any order: compare
            // the keys, then that the same rollups came out.
            var ascending = rollups
            RollupAggregator.sortByWindowAndSeries(&ascending)
            let expected = Self.expectedOrder(rollups)
            #expect(ascending.map(\.window) == expected.map(\.window))
            #expect(ascending.map(\.series) == expected.map(\.series))
            #expect(ascending.map(\.events).sorted() == rollups.map(\.events).sorted())

            var descending = rollups
            RollupAggregator.sortByWindowAndSeries(&descending, descending: true)
            #expect(descending.map(\.series) == expected.reversed().map(\.series))
            #expect(descending.map(\.window) == expected.reversed().map(\.window))
        }
    }

    @Test func permuteMovesEachElementToItsPosition() {
        var random = SeededGenerator(seed: 7)
        for count in [0, 1, 2, 5, 64, 333] {
            let order = Array(0..<count).shuffled(using: &random)
            let elements = (0..<count).map { "element \($0)" }
            var permuted = elements
            var used = order
            RollupAggregator.permute(&permuted, by: &used)
            #expect(permuted == order.map { elements[$0] })
        }
    }
}
