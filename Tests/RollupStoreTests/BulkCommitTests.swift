import FlowmeterModels
import RollupStore
import Rollups
import Testing

/// A sink's step merges its rows in bulk (`WindowTable.merge(_:on:)`): the stored rows must be the ones merging each
/// rollup in turn gives (the path `apply` takes), over more rows than one statement carries.
@Suite struct BulkCommitTests {
    /// Three steps of 300 series and 40 app builds over two hours: new rows, rows merged again at the same minute,
    /// and an hour's minutes merged into one hour row, with installs and samples that differ.
    private static func steps() -> [(series: [SeriesRollup], versions: [VersionRollup])] {
        (0..<3).map { step in
            let series = (0..<300).map { index in
                RollupFactory.seriesRollup(
                    RollupFactory.series(
                        version: "1.\(index % 7)", kind: index % 5 == 0 ? .malformedPayload : .unknownType,
                        widget: "widget-\(index)"),
                    minute: Int64((index * 7 + step * (index % 2 == 0 ? 0 : 13)) % 120),
                    events: Int64(index + step + 1),
                    installs: (0..<(index % 4 + 1)).map { "install-\($0 + step * 3 + index)" },
                    second: Int64((index + step * 11) % 60), release: "api@\(step % 2)",
                    path: "Index \(step).title")
            }
            let versions = (0..<40).map { index in
                RollupFactory.versionRollup(
                    RollupFactory.versionKey(version: "2.\(index)"), minute: Int64((index * 11 + step * 17) % 120),
                    batches: Int64(index + 1), decodes: Int64(step), types: ["type-\(step)", "type-\(index % 3)"],
                    schema: index % 4 == 0 ? nil : step + index % 5)
            }
            return (series, versions)
        }
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func aStepsBulkMergeStoresWhatMergingEachRollupDoes(kind: StoreKind) throws {
        var pair = try BulkAndOneByOne(kind)
        let (bulk, oneByOne) = (pair.bulk, pair.oneByOne)
        for (series, versions) in Self.steps() { try pair.merge(series: series, versions: versions) }
        let from = RollupFactory.at(minute: 0)
        let to = RollupFactory.at(minute: 120)
        let query = SeriesQuery(from: from, to: to)
        let minutes = try bulk.store.seriesRollups(query)
        #expect(minutes.count > 300)
        #expect(minutes == (try oneByOne.store.seriesRollups(query)))
        // Whole hours are read from the hour rows.
        let hours = try bulk.store.seriesBuckets(query, bucketSeconds: 3_600)
        #expect(!hours.isEmpty)
        #expect(hours == (try oneByOne.store.seriesBuckets(query, bucketSeconds: 3_600)))
        #expect(
            try bulk.store.versionRollups(from: from, to: to, appID: nil)
                == oneByOne.store.versionRollups(from: from, to: to, appID: nil))
        #expect(
            try bulk.store.versionBuckets(from: from, to: to, appID: nil, bucketSeconds: 3_600)
                == oneByOne.store.versionBuckets(from: from, to: to, appID: nil, bucketSeconds: 3_600))
        for kind in [DiagnosticKind.unknownType, .malformedPayload] {
            let firstSeen = try bulk.store.firstSeen(appID: nil, kind: kind, buildConfiguration: .release)
            #expect(firstSeen.count > 10)
            #expect(firstSeen == (try oneByOne.store.firstSeen(appID: nil, kind: kind, buildConfiguration: .release)))
        }
    }
}

/// Two stores of one kind fed the same rollups: `bulk` as a sink's steps of one partition (the bulk merge),
/// `oneByOne` through `apply` (each rollup merged in turn, everything it writes encoded).
struct BulkAndOneByOne {
    let bulk: StoreFixture
    let oneByOne: StoreFixture
    private var factory = RollupFactory()
    private var offset: Int64?

    init(_ kind: StoreKind) throws {
        bulk = try StoreFixture(kind)
        oneByOne = try StoreFixture(kind)
    }

    /// Commits the rollups to `bulk` as the next step and applies them to `oneByOne`.
    mutating func merge(series: [SeriesRollup], versions: [VersionRollup]) throws {
        try bulk.store.commit(
            PartitionStep(
                topic: "flowmeter.batches.v1", partition: 0, partitions: 1, startOffset: offset,
                nextOffset: (offset ?? 0) + 1, series: series, versions: versions))
        offset = (offset ?? 0) + 1
        _ = try oneByOne.store.apply(factory.partials(series.map { .series($0) } + versions.map { .version($0) }))
    }
}
