import FlowmeterModels
import Rollups
import Testing

@testable import RollupStore

/// A sink's step merges its rows in bulk (`WindowTable.merge(_:ids:on:)`), which may keep a stored row's blobs as they
/// were read when the merge leaves them unchanged: every column of every row it stores must be byte for byte what
/// merging each rollup in turn (`apply`, which encodes every row it writes) stores, with sketches that turn dense and
/// more releases and samples than a rollup keeps.
@Suite struct BulkCommitBytesTests {
    /// Four steps of 120 series and 24 app builds over two hours, every step merging into the rows of the ones before
    /// and several of a step's minutes into one hour row.
    private static func steps() -> [(series: [SeriesRollup], versions: [VersionRollup])] {
        (0..<4).map { step in
            let series = (0..<120).map { index in
                var sketch = HyperLogLog()
                // Every 10th series gets past the sparse limit over the steps; the rest stay sparse.
                let installs = index % 10 == 0 ? 200 : index % 3 + 1
                for install in 0..<installs { sketch.insert(installHash: "install-\(index)-\(step)-\(install)") }
                // Every 6th series has more releases than a rollup keeps; the others one or two, often the same.
                var releases: [String: Int64] = ["api@\(index % 2)": Int64(step + 1)]
                if index % 6 == 0 {
                    for release in 0..<(10 + step * 4) { releases["svc-\(release)@\(step)"] = Int64(release % 5 + 1) }
                } else if index % 4 == 1 {
                    releases["api@\(step % 2 + 2)"] = 1
                }
                // Samples: mostly the same few every step (a stored row's samples unchanged), some that sort first.
                var samples = [
                    RollupSample(codingPath: "page.sections.Index 1.title", message: "unknown type", pageID: "home"),
                    RollupSample(codingPath: "page.sections.Index 2.widgets", message: "bad", pageID: "p\(index)"),
                ]
                if index % 5 == 0 {
                    samples.append(
                        RollupSample(codingPath: "a.\(step).early", message: nil, pageID: nil))
                }
                if index % 7 == 0 {
                    samples += (0..<4).map {
                        RollupSample(codingPath: "z.\(step).\($0)", message: "m\($0)", pageID: "q")
                    }
                }
                let minute = Int64((index * 7 + step * (index % 2 == 0 ? 0 : 13)) % 120)
                let start = RollupFactory.base + minute * 60
                return SeriesRollup(
                    series: RollupFactory.series(
                        version: "1.\(index % 7)", kind: index % 5 == 0 ? .malformedPayload : .unknownType,
                        widget: "widget-\(index % 60)"),
                    window: MinuteWindow(start: start), events: Int64(index + step + 1), installs: sketch,
                    firstSeen: Timestamp(secondsSinceEpoch: start + Int64((index + step * 11) % 60)),
                    lastSeen: Timestamp(secondsSinceEpoch: start + 59, nanoseconds: 7), releases: releases,
                    samples: samples)
            }
            let versions = (0..<24).map { index in
                var sketch = HyperLogLog()
                for install in 0..<(index % 8 == 0 ? 600 : 2) { sketch.insert(installHash: "v-\(index)-\(install)") }
                var releases: [String: VersionReleaseTraffic] = [:]
                var builds: [String: VersionBuildTraffic] = [:]
                if index % 3 != 0 {
                    releases["api@\(step % 2)"] = VersionReleaseTraffic(batches: 2, decodes: 3)
                    builds["b\(index % 2)"] = VersionBuildTraffic(batches: 1, lastSeen: RollupFactory.base)
                }
                let minute = Int64((index * 11 + step * 17) % 120)
                return VersionRollup(
                    key: RollupFactory.versionKey(version: "2.\(index % 12)"),
                    window: MinuteWindow(start: RollupFactory.base + minute * 60), batches: Int64(index + 1),
                    cleanBatches: Int64(index / 2), decodes: Int64(step), installs: sketch,
                    registeredTypes: ["type-\(step % 2)", "type-\(index % 3)"],
                    maxSchemaVersion: index % 4 == 0 ? nil : step + index % 5, clientDiscarded: Int64(index % 3),
                    releases: releases, builds: builds)
            }
            return (series, versions)
        }
    }

    /// One column as read back, compared as stored.
    enum Cell: Equatable {
        case null
        case integer(Int64)
        case text(String)
        case blob([UInt8])
    }

    /// Every row of `table` joined to its key's columns (`keys`, the key table), ordered by key and window; `kinds`
    /// holds, per value column of the window table, `i` (integer) or `b` (blob).
    private static func rows(
        _ database: any SQLDatabase, table: String, keyTable: String, keyColumns: SQLColumns, idColumn: String,
        valueColumns: SQLColumns, kinds: [Character]
    ) throws -> [[Cell]] {
        var rows: [[Cell]] = []
        try database.query(
            """
            SELECT \(keyColumns.list(alias: "k")), m.window_start, \(valueColumns.list(alias: "m"))
            FROM \(keyTable) k JOIN \(table) m ON m.\(idColumn) = k.id
            ORDER BY \(keyColumns.list(alias: "k")), m.window_start
            """, []
        ) { row in
            var cells: [Cell] = []
            for column in 0..<keyColumns.count { cells.append(.text(try row.text(Int32(column)))) }
            cells.append(.integer(try row.int64(Int32(keyColumns.count))))
            for (offset, kind) in kinds.enumerated() {
                let column = Int32(keyColumns.count + 1 + offset)
                if row.isNull(column) {
                    cells.append(.null)
                } else {
                    cells.append(kind == "i" ? .integer(try row.int64(column)) : .blob(try row.blob(column)))
                }
            }
            rows.append(cells)
        }
        return rows
    }

    private static func everyRow(_ fixture: StoreFixture) throws -> [String: [[Cell]]] {
        let database: any SQLDatabase
        switch fixture.kind {
        case .sqlite: database = try SQLiteConnection(path: String(fixture.location.dropFirst("sqlite:".count)))
        case .postgres: database = try PostgresConnection(url: fixture.location)
        case .inMemory: return [:]
        }
        var tables: [String: [[Cell]]] = [:]
        for table in [SeriesWindowTable.minutes, .hours] {
            tables[table.name] = try rows(
                database, table: table.name, keyTable: SeriesTable.name, keyColumns: SeriesTable.columns,
                idColumn: SeriesWindowTable.idColumn, valueColumns: SeriesWindowTable.valueColumns,
                kinds: Array("ibiiiibb"))
        }
        for table in [VersionWindowTable.minutes, .hours] {
            tables[table.name] = try rows(
                database, table: table.name, keyTable: VersionTable.name, keyColumns: VersionTable.columns,
                idColumn: VersionWindowTable.idColumn, valueColumns: VersionWindowTable.valueColumns,
                kinds: Array("iiibbiibb"))
        }
        var firstSeen: [[Cell]] = []
        try database.query(
            "SELECT \(TypeFirstSeenTable.columns.list()) FROM \(TypeFirstSeenTable.name) ORDER BY "
                + TypeFirstSeenTable.keyColumns.list(), []
        ) { row in
            var cells: [Cell] = []
            for column in 0..<4 { cells.append(.text(try row.text(Int32(column)))) }
            cells += [.integer(try row.int64(4)), .integer(try row.int64(5))]
            firstSeen.append(cells)
        }
        tables[TypeFirstSeenTable.name] = firstSeen
        return tables
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func aStepsBulkMergeStoresTheBytesMergingEachRollupStores(kind: StoreKind) throws {
        var pair = try BulkAndOneByOne(kind)
        let (bulk, oneByOne) = (pair.bulk, pair.oneByOne)
        var checked = 0
        for (series, versions) in Self.steps() {
            try pair.merge(series: series, versions: versions)
            // After every step, so a row kept as read and then merged again is compared too.
            let stored = try Self.everyRow(bulk)
            let expected = try Self.everyRow(oneByOne)
            #expect(stored.keys.sorted() == expected.keys.sorted())
            for (table, rows) in expected {
                #expect(!rows.isEmpty, "\(table)")
                #expect(stored[table]?.count == rows.count, "\(table)")
                for (index, row) in rows.enumerated() where stored[table]?[index] != row {
                    Issue.record(
                        "\(table) row \(index) differs: \(String(describing: stored[table]?[index])) != \(row)")
                    break
                }
                checked += rows.count
            }
        }
        #expect(checked > 1_000)
    }

    /// A stored blob in a form the store does not write (a sketch in the other representation, samples with a byte
    /// after them, registered types out of order) decodes to the same values, so a merge that changes nothing in it
    /// must still write it as encoding gives it, as merging one rollup at a time does.
    @Test(arguments: [StoreKind.sqlite, .postgres])
    func blobsInAnotherFormAreWrittenAsEncodingGivesThem(kind: StoreKind) throws {
        var sketch = HyperLogLog()
        sketch.insert(installHash: "install-1")
        let sample = RollupSample(codingPath: "page.Index 1.title", message: "unknown type", pageID: "home")
        let series = (0..<20).map { index in
            SeriesRollup(
                series: RollupFactory.series(widget: "widget-\(index)"),
                window: MinuteWindow(start: RollupFactory.base + Int64(index % 3) * 60), events: 1, installs: sketch,
                firstSeen: Timestamp(secondsSinceEpoch: RollupFactory.base),
                lastSeen: Timestamp(secondsSinceEpoch: RollupFactory.base), releases: ["api@1": 1], samples: [sample])
        }
        let versions = (0..<5).map { index in
            VersionRollup(
                key: RollupFactory.versionKey(version: "2.\(index)"), window: MinuteWindow(start: RollupFactory.base),
                batches: 1, installs: sketch, registeredTypes: ["a", "b"])
        }
        // The sketch's one register, dense; the samples with a byte after them; the types out of order.
        let sparse = sketch.serialized()
        var dense: [UInt8] = [1, 1, 12] + [UInt8](repeating: 0, count: HyperLogLog.registerCount)
        dense[3 + (Int(sparse[5]) << 8 | Int(sparse[6]))] = sparse[7]
        let samples = RollupBlobCodec.encode(samples: [sample]) + [0]
        let types: [UInt8] = [1, 2, 1, UInt8(ascii: "b"), 1, UInt8(ascii: "a")]
        #expect(try HyperLogLog(serialized: dense) == sketch)
        #expect(try RollupBlobCodec.decodeSamples(samples) == [sample])
        #expect(try RollupBlobCodec.decodeStrings(types) == ["a", "b"])

        var pair = try BulkAndOneByOne(kind)
        let (bulk, oneByOne) = (pair.bulk, pair.oneByOne)
        for step in 0..<2 {
            try pair.merge(series: series, versions: versions)
            guard step == 0 else { break }
            for fixture in [bulk, oneByOne] {
                for table in [SeriesWindowTable.minutes.name, SeriesWindowTable.hours.name] {
                    try HostileRowsTests.edit(
                        fixture, "UPDATE \(table) SET installs = $1, samples = $2", [.blob(dense), .blob(samples)])
                }
                for table in [VersionWindowTable.minutes.name, VersionWindowTable.hours.name] {
                    try HostileRowsTests.edit(
                        fixture, "UPDATE \(table) SET installs = $1, registered_types = $2",
                        [.blob(dense), .blob(types)])
                }
            }
        }
        let stored = try Self.everyRow(bulk)
        let expected = try Self.everyRow(oneByOne)
        for (table, rows) in expected {
            #expect(!rows.isEmpty, "\(table)")
            #expect(stored[table] == rows, "\(table)")
        }
        // And what both hold is the encoded form.
        let minutes = try #require(expected[SeriesWindowTable.minutes.name])
        #expect(
            minutes.allSatisfy { $0[8] == .blob(sparse) && $0[14] == .blob(RollupBlobCodec.encode(samples: [sample])) })
    }
}
