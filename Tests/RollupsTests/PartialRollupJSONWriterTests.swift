import FlowmeterModels
import Foundation
import TestSupport
import Testing

@testable import Rollups

/// The byte writer against the Codable reference (`JSONEncoder` over the wire form).
@Suite struct PartialRollupJSONWriterTests {
    typealias F = RollupFixtures

    @Test(arguments: 0..<40)
    func seriesBytesDecodeLikeTheReference(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &+ 7_000)
        var rollup = F.seriesRollup(&random, releasePool: 30, samplePool: 9)
        if seed % 5 == 0 { rollup.series.widgetType = "" }
        if seed % 7 == 0 { rollup.series.appID = "com.example.\"quoted\"\\slash/é\u{2028}😀" }
        if seed % 3 == 0 { rollup.firstSeen = Timestamp(secondsSinceEpoch: -62_135_596_800 + Int64(seed)) }
        let partial = PartialRollup(id: "c-\(seed)/1/\(seed)", collector: "collector \"a\"", rollup: .series(rollup))
        try expectSame(partial)
    }

    @Test(arguments: 0..<40)
    func versionBytesDecodeLikeTheReference(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &+ 9_000)
        var rollup = F.versionRollup(&random)
        if seed % 4 == 0 { rollup.registeredTypes.insert("type\u{2029}\u{A0}\"x\"") }
        if seed % 6 == 0 { rollup.decodes = .max }
        rollup.clientDiscarded = seed % 3 == 0 ? 0 : Int64(seed * 17)
        if seed % 9 == 0 { rollup.clientDiscarded = .max }
        let partial = PartialRollup(id: "c/\(seed)/0", collector: "c", rollup: .version(rollup))
        try expectSame(partial)
    }

    @Test func stringsThatBreakTheIdentifierRuleAreRefused() throws {
        var random = SeededGenerator(seed: 3)
        for hostile in ["com.example\u{1}", "a\u{7F}", "\u{85}", " "] {
            var rollup = F.seriesRollup(&random)
            rollup.series.appID = hostile
            let bytes = PartialRollup(id: "x", collector: "c", rollup: .series(rollup)).jsonBytes()
            #expect(throws: RollupsError.self) { try PartialRollup(jsonBytes: bytes) }
            var version = F.versionRollup(&random)
            version.registeredTypes.insert(hostile)
            let versionBytes = PartialRollup(id: "y", collector: "c", rollup: .version(version)).jsonBytes()
            #expect(throws: RollupsError.self) { try PartialRollup(jsonBytes: versionBytes) }
        }
    }

    /// Builds travel like releases: a build that breaks the identifier rule, negative batches or a minute that is not
    /// one are refused; a rollup without `builds` (written before they existed) has none.
    @Test func buildsTravelAndBadOnesAreRefused() throws {
        var random = SeededGenerator(seed: 11)
        var rollup = F.versionRollup(&random)
        rollup.builds = [
            "5210": VersionBuildTraffic(batches: 4, lastSeen: F.window.start),
            "5211 (beta)": VersionBuildTraffic(batches: 1, lastSeen: F.window.start - 60),
        ]
        try expectSame(PartialRollup(id: "b", collector: "c", rollup: .version(rollup)))
        let text = String(
            decoding: PartialRollup(id: "b", collector: "c", rollup: .version(rollup)).jsonBytes(), as: UTF8.self)
        let builds =
            #""builds":{"5210":{"batches":4,"lastSeen":\#(F.window.start)},"#
            + #""5211 (beta)":{"batches":1,"lastSeen":\#(F.window.start - 60)}},"#
        #expect(text.contains(builds))
        let older = try PartialRollup(jsonBytes: Array(text.replacingOccurrences(of: builds, with: "").utf8))
        guard case .version(let version) = older.rollup else {
            Issue.record("not a version rollup")
            return
        }
        #expect(version.builds.isEmpty)
        for hostile in [
            VersionBuildTraffic(batches: -1, lastSeen: F.window.start),
            VersionBuildTraffic(batches: 1, lastSeen: F.window.start + 1),
        ] {
            var bad = rollup
            bad.builds["5210"] = hostile
            let bytes = PartialRollup(id: "b", collector: "c", rollup: .version(bad)).jsonBytes()
            #expect(throws: RollupsError.self) { try PartialRollup(jsonBytes: bytes) }
        }
        for hostile in ["52\u{1}10", " ", ""] {
            var bad = rollup
            bad.builds[hostile] = VersionBuildTraffic(batches: 1, lastSeen: F.window.start)
            let bytes = PartialRollup(id: "b", collector: "c", rollup: .version(bad)).jsonBytes()
            #expect(throws: RollupsError.self) { try PartialRollup(jsonBytes: bytes) }
        }
    }

    @Test func aVersionRollupWrittenBeforeClientDiscardedExistedReadsAsZero() throws {
        var random = SeededGenerator(seed: 5)
        var rollup = F.versionRollup(&random)
        rollup.clientDiscarded = 9
        let bytes = PartialRollup(id: "old", collector: "c", rollup: .version(rollup)).jsonBytes()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#","clientDiscarded":9"#))
        let older = Array(text.replacingOccurrences(of: #","clientDiscarded":9"#, with: "").utf8)
        let decoded = try PartialRollup(jsonBytes: older)
        guard case .version(let version) = decoded.rollup else {
            Issue.record("not a version rollup")
            return
        }
        rollup.clientDiscarded = 0
        #expect(version == rollup)
        let negative = Array(
            text.replacingOccurrences(of: #""clientDiscarded":9"#, with: #""clientDiscarded":-1"#).utf8)
        #expect(throws: RollupsError.self) { try PartialRollup(jsonBytes: negative) }
    }

    @Test func extremeCountsAndEmptySketchesMatch() throws {
        var random = SeededGenerator(seed: 1)
        var rollup = F.seriesRollup(&random)
        rollup.events = .max
        rollup.installs = HyperLogLog()
        try expectSame(PartialRollup(id: "x", collector: "c", rollup: .series(rollup)))
        var version = VersionRollup(key: F.version, window: MinuteWindow(start: -60), batches: 0, decodes: .max)
        version.installs.insert(hash: 1)
        try expectSame(PartialRollup(id: "y", collector: "c", rollup: .version(version)))
    }

    /// Both spellings decode to the partial, and parse to the same JSON object.
    private func expectSame(_ partial: PartialRollup) throws {
        let written = partial.jsonBytes()
        let reference = partial.codableJSONBytes()
        let fromWritten = try PartialRollup(jsonBytes: written)
        #expect(fromWritten == (try PartialRollup(jsonBytes: reference)))
        #expect(fromWritten == partial)
        let object = try JSONSerialization.jsonObject(with: Data(written)) as? NSDictionary
        let referenceObject = try JSONSerialization.jsonObject(with: Data(reference)) as? NSDictionary
        #expect(object != nil && object == referenceObject)
    }
}
