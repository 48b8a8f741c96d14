import FlowmeterModels
import TestSupport

@testable import Rollups

/// Seeded random rollups for the merge-law properties.
enum RollupFixtures {
    static let series = RollupSeries(
        appID: "com.example.shop", platform: "ios", appVersion: "5.2.1", buildConfiguration: .release,
        kind: .unknownType, widgetType: "hologram_projector")
    static let version = series.versionKey
    static let window = MinuteWindow(start: 1_764_493_140)

    static func seriesRollup(
        _ random: inout SeededGenerator, releasePool: Int = 6, samplePool: Int = 5
    ) -> SeriesRollup {
        var installs = HyperLogLog()
        for _ in 0..<Int(random.next() % 40) { installs.insert(hash: random.next() % 64 &* 0x9E37_79B9_7F4A_7C15) }
        let first = Int64(random.next() % 60)
        let last = first + Int64(random.next() % UInt64(60 - first))
        var releases: [String: Int64] = [:]
        for _ in 0..<Int(random.next() % 5) {
            releases["page-api@\(random.next() % UInt64(releasePool))", default: 0] += Int64(random.next() % 50 + 1)
        }
        var samples: [RollupSample] = []
        for _ in 0..<Int(random.next() % 4) {
            samples.append(
                RollupSample(
                    codingPath:
                        "page.sections.Index \(random.next() % 9).widgets.Index \(random.next() % UInt64(samplePool))",
                    message: random.next() % 3 == 0 ? nil : "Unknown widget type \(random.next() % 2)",
                    pageID: random.next() % 2 == 0 ? nil : "page-\(random.next() % 3)"))
        }
        return SeriesRollup(
            series: series, window: window, events: Int64(random.next() % 1000 + 1), installs: installs,
            firstSeen: Timestamp(secondsSinceEpoch: window.start + first, nanoseconds: Int32(random.next() % 1000)),
            lastSeen: Timestamp(secondsSinceEpoch: window.start + last, nanoseconds: 999_000),
            releases: releases, samples: samples)
    }

    static func versionRollup(_ random: inout SeededGenerator) -> VersionRollup {
        var installs = HyperLogLog()
        for _ in 0..<Int(random.next() % 600) { installs.insert(hash: random.next()) }
        let types = ["title_block", "image_text_card", "carousel", "hologram_projector", "map"]
        let batches = Int64(random.next() % 100)
        return VersionRollup(
            key: version, window: window, batches: batches, cleanBatches: Int64(random.next() % UInt64(batches + 1)),
            decodes: Int64(random.next() % 10_000), installs: installs,
            registeredTypes: Set(types.filter { _ in random.next() % 2 == 0 }),
            maxSchemaVersion: random.next() % 3 == 0 ? nil : Int(random.next() % 10),
            releases: random.next() % 2 == 0
                ? [:]
                : [
                    "page-api@\(random.next() % 3)": VersionReleaseTraffic(
                        batches: Int64(random.next() % 50), decodes: Int64(random.next() % 500))
                ],
            builds: random.next() % 2 == 0
                ? [:]
                : [
                    "52\(random.next() % 3)": VersionBuildTraffic(
                        batches: Int64(random.next() % 50), lastSeen: window.start - 60 * Int64(random.next() % 3))
                ])
    }

    static func merged(_ lhs: SeriesRollup, _ rhs: SeriesRollup) -> SeriesRollup {
        var copy = lhs
        copy.merge(rhs)
        return copy
    }

    static func merged(_ lhs: VersionRollup, _ rhs: VersionRollup) -> VersionRollup {
        var copy = lhs
        copy.merge(rhs)
        return copy
    }
}
