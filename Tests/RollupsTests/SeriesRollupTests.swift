import FlowmeterModels
import TestSupport
import Testing

@testable import Rollups

@Suite struct SeriesRollupTests {
    typealias F = RollupFixtures

    @Test(arguments: 0..<8)
    func mergeIsAssociativeAndCommutative(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &* 1_000_003)
        for _ in 0..<100 {
            let a = F.seriesRollup(&random)
            let b = F.seriesRollup(&random)
            let c = F.seriesRollup(&random)
            #expect(F.merged(a, b) == F.merged(b, a))
            #expect(F.merged(F.merged(a, b), c) == F.merged(a, F.merged(b, c)))
            #expect(F.merged(F.merged(a, c), b) == F.merged(a, F.merged(b, c)))
        }
    }

    @Test(arguments: 0..<4)
    func everyMergeOrderOfManyPartialsAgrees(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &+ 99)
        let partials = (0..<12).map { _ in F.seriesRollup(&random) }
        let inOrder = partials.dropFirst().reduce(partials[0], F.merged)
        var shuffled = partials
        shuffled.shuffle(using: &random)
        let reversedTree = F.merged(
            shuffled[6...].dropFirst().reduce(shuffled[6], F.merged),
            shuffled[..<6].dropFirst().reduce(shuffled[0], F.merged))
        #expect(inOrder == reversedTree)
        #expect(inOrder.events == partials.reduce(0) { $0 + $1.events })
        #expect(inOrder.firstSeen == partials.map(\.firstSeen).min())
        #expect(inOrder.lastSeen == partials.map(\.lastSeen).max())
    }

    @Test func hyperLogLogPartOfAMergeIsIdempotent() {
        var random = SeededGenerator(seed: 4)
        let a = F.seriesRollup(&random)
        let twice = F.merged(a, a)
        #expect(twice.installs == a.installs)
        #expect(twice.events == 2 * a.events)  // counts are not idempotent: ids make replays harmless
    }

    /// With more than 16 releases in play, commutativity still holds exactly and samples stay exact; releases keep
    /// what the documentation promises.
    @Test(arguments: 0..<4)
    func boundedReleasesKeepTheirDocumentedLaws(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &+ 7)
        for _ in 0..<100 {
            let parts = (0..<3).map { _ in F.seriesRollup(&random, releasePool: 60, samplePool: 40) }
            let left = F.merged(F.merged(parts[0], parts[1]), parts[2])
            let right = F.merged(parts[0], F.merged(parts[1], parts[2]))
            #expect(F.merged(parts[0], parts[1]) == F.merged(parts[1], parts[0]))
            #expect(left.events == right.events && left.installs == right.installs)
            #expect(left.samples == right.samples)
            #expect(left.samples == SeriesRollup.boundedSamples(parts.flatMap(\.samples)))
            var truth: [String: Int64] = [:]
            for part in parts { truth.merge(part.releases, uniquingKeysWith: +) }
            for merged in [left, right] {
                #expect(merged.releases.count == min(truth.count, SeriesRollup.maxReleases))
                #expect(merged.releases.values.reduce(0, +) <= merged.events)
                for (release, count) in merged.releases { #expect(count <= truth[release]!) }
            }
            if truth.count <= SeriesRollup.maxReleases { #expect(left.releases == right.releases) }
        }
    }

    /// The merge's walk of two sample lists keeps exactly what bounding the two together keeps, for bounded,
    /// unsorted and over-long lists alike.
    @Test(arguments: 0..<4)
    func mergedSamplesKeepWhatBoundingBothTogetherKeeps(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &+ 31)
        let pool = (0..<6).flatMap { place in
            [nil, "m\(place % 2)"].map { RollupSample(codingPath: "p\(place % 3)", message: $0, pageID: "x\(place)") }
        }
        for _ in 0..<300 {
            let lhs = (0..<Int.random(in: 0...5, using: &random)).map { _ in pool.randomElement(using: &random)! }
            let rhs = (0..<Int.random(in: 1...5, using: &random)).map { _ in pool.randomElement(using: &random)! }
            let bounded = (SeriesRollup.boundedSamples(lhs), SeriesRollup.boundedSamples(rhs))
            for (left, right) in [(lhs, rhs), bounded] {
                #expect(SeriesRollup.mergedSamples(left, right) == SeriesRollup.boundedSamples(left + right))
            }
        }
    }

    @Test func releasesKeepTheLargestCountsTiesByName() {
        var releases: [String: Int64] = [:]
        for index in 0..<20 { releases["svc@\(index)"] = index < 10 ? 5 : 1 }
        let rollup = SeriesRollup(
            series: F.series, window: F.window, events: 60, firstSeen: F.window.startTimestamp,
            lastSeen: F.window.startTimestamp, releases: releases)
        #expect(rollup.releases.count == 16)
        let kept = Set(rollup.releases.keys)
        let expectedOnes = ["svc@10", "svc@11", "svc@12", "svc@13", "svc@14", "svc@15"]
        #expect(kept == Set((0..<10).map { "svc@\($0)" } + expectedOnes))
        #expect(rollup.releasesByFrequency.first?.release == "svc@0")
    }

    @Test func samplesKeepTheFirstThreeDistinctPlacesAndMessages() {
        let samples = [
            RollupSample(codingPath: "b.Index 1", message: "x", pageID: "home"),
            RollupSample(codingPath: "a.Index 7", message: "x", pageID: "search"),
            RollupSample(codingPath: "a.Index 2", message: "x", pageID: "cart"),
            RollupSample(codingPath: "a.Index 3", message: nil, pageID: nil),
            RollupSample(codingPath: "c", message: "y", pageID: nil),
        ]
        let rollup = SeriesRollup(
            series: F.series, window: F.window, events: 5, firstSeen: F.window.startTimestamp,
            lastSeen: F.window.startTimestamp, samples: samples)
        #expect(
            rollup.samples == [
                RollupSample(codingPath: "a.Index *", message: nil, pageID: nil),
                RollupSample(codingPath: "a.Index *", message: "x", pageID: "cart"),
                RollupSample(codingPath: "b.Index *", message: "x", pageID: "home"),
            ])
    }

    @Test(arguments: [
        ("page.sections.Index 0.widgets.Index 12", "page.sections.Index *.widgets.Index *"),
        ("page.sections.Index 3", "page.sections.Index *"),
        ("page.title", "page.title"),
        ("", ""),
        ("Index 5", "Index *"),
        ("Index x.Index ", "Index x.Index "),
        ("page.Indexes.Index 01234567890123456789", "page.Indexes.Index *"),
        ("héllo.Index 4.wörld", "héllo.Index *.wörld"),
    ])
    func codingPathsAreNormalized(raw: String, normalized: String) {
        #expect(RollupSample.normalizedPath(raw) == normalized)
        #expect(RollupSample(codingPath: raw, message: nil, pageID: nil).codingPath == normalized)
    }

    @Test func versionRollupMergeIsAssociativeAndCommutative() {
        var random = SeededGenerator(seed: 12)
        for _ in 0..<200 {
            let a = F.versionRollup(&random)
            let b = F.versionRollup(&random)
            let c = F.versionRollup(&random)
            #expect(F.merged(a, b) == F.merged(b, a))
            #expect(F.merged(F.merged(a, b), c) == F.merged(a, F.merged(b, c)))
            #expect(F.merged(a, a).installs == a.installs)
            #expect(F.merged(a, a).registeredTypes == a.registeredTypes)
        }
    }

    /// Counts in Kafka messages can be anything; a merge at the top of the range saturates instead of trapping (found
    /// by the former rollup-wire fuzz target, docs/fuzzing.md).
    @Test func mergingCountsAtTheTopOfTheRangeSaturates() {
        var random = SeededGenerator(seed: 5)
        var series = F.seriesRollup(&random)
        series.events = .max
        series.releases = ["page-api@1": .max, "page-api@2": 1]
        #expect(F.merged(series, series).events == .max)
        #expect(F.merged(series, series).releases == ["page-api@1": .max, "page-api@2": 2])
        var version = F.versionRollup(&random)
        version.batches = .max
        version.cleanBatches = .max
        version.decodes = .max - 1
        let merged = F.merged(version, version)
        #expect([merged.batches, merged.cleanBatches, merged.decodes] == [.max, .max, .max])
    }

    @Test func windowsAreFlooredMinutes() {
        #expect(
            MinuteWindow(containing: Timestamp(secondsSinceEpoch: 1_764_493_199, nanoseconds: 999)).start
                == 1_764_493_140)
        #expect(MinuteWindow(containing: Timestamp(secondsSinceEpoch: 1_764_493_140)).start == 1_764_493_140)
        #expect(MinuteWindow(containing: Timestamp(secondsSinceEpoch: -1)).start == -60)
        #expect(MinuteWindow(start: 7_200).bucketStart(bucketSeconds: 3_600) == 7_200)
        #expect(MinuteWindow(start: 7_140).bucketStart(bucketSeconds: 3_600) == 3_600)
    }
}
