import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// `flowmeter manifests diff` on planted builds: 5300 (5.3.0, in use by most installs) and 5400 (5.4.0), which drops
/// `promo_banner` (page-api@7 still sends it) and newly requires `imageURL` on `image_text_card` (a fixture lacks it).
@Suite struct ManifestsDiffTests {
    static let app = "com.example.shop"

    static func plantedStore() async throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory(prefix: "flowmeter-diff")
        let path = directory.file("store.sqlite")
        let store = try openRollupStore(url: path)
        let minute = Timestamp(Date()).secondsSinceEpoch / 60 * 60 - 1800
        var partials: [PartialRollup] = []
        for (version, installs) in [("5.2.1", 10), ("5.3.0", 40)] {
            partials.append(
                PartialRollup(
                    id: "v/\(version)", collector: "test",
                    rollup: .version(
                        VersionRollup(
                            key: VersionKey(
                                appID: app, platform: "ios", appVersion: version, buildConfiguration: .release),
                            window: MinuteWindow(start: minute), batches: 10, cleanBatches: 9, decodes: 100,
                            installs: SeededStore.sketch(installs, prefix: version)))))
        }
        let at = Timestamp(secondsSinceEpoch: minute + 5)
        partials.append(
            PartialRollup(
                id: "s/promo", collector: "test",
                rollup: .series(
                    SeriesRollup(
                        series: RollupSeries(
                            appID: app, platform: "ios", appVersion: "5.3.0", buildConfiguration: .release,
                            kind: .malformedPayload, widgetType: "promo_banner"),
                        window: MinuteWindow(start: minute), events: 12, firstSeen: at, lastSeen: at,
                        releases: ["page-api@7": 12]))))
        _ = try store.apply(partials)
        let manifests = [
            (
                "5300", "5.3.0",
                #"{"image_text_card":{"required":["title"],"optional":["imageURL"]},"promo_banner":{"required":["text"]},"title_block":{"required":["text"]}}"#
            ),
            (
                "5301", "5.3.0",
                #"{"image_text_card":{"required":["title"],"optional":["imageURL","kicker"]},"promo_banner":{"required":["text"]},"title_block":{"required":["text"]}}"#
            ),
            (
                "5400", "5.4.0",
                #"{"image_text_card":{"required":["title","imageURL"]},"title_block":{"required":["text"]}}"#
            ),
        ]
        for (build, version, types) in manifests {
            let file = directory.file("manifest-\(build).json")
            try Data(
                #"{"appID":"\#(app)","appVersion":"\#(version)","platform":"ios","build":"\#(build)","types":\#(types)}"#
                    .utf8
            ).write(to: URL(fileURLWithPath: file))
            let upload = await CLI.run(["manifests", "upload", file, "--store", path])
            try #require(upload.status == 0, "\(upload.standardError)")
        }
        try FileManager.default.createDirectory(atPath: directory.file("fixtures"), withIntermediateDirectories: true)
        try Data(
            #"""
            {"page": {"sections": [{"widgets": [
              {"type": "image_text_card", "data": {"title": "Lamp", "imageURL": "https://x/lamp.png"}},
              {"type": "image_text_card", "data": {"title": "Chair"}}]}]}}
            """#.utf8
        ).write(to: URL(fileURLWithPath: directory.file("fixtures/home.json")))
        return (directory, path)
    }

    @Test func aBuildThatDropsASentTypeAndRequiresAMissingKeyWouldBreak() async throws {
        let (directory, store) = try await Self.plantedStore()
        defer { directory.remove() }
        let result = await CLI.run([
            "manifests", "diff", "--app", Self.app, "--platform", "ios", "--from", "5300", "--to", "5400",
            "--fixtures", directory.file("fixtures"), "--store", store, "--format", "json",
        ])
        #expect(result.status == 3, "\(result.standardError)")
        let json = try CLI.json(result)
        let dropped = try #require(json["droppedTypes"] as? [[String: Any]])
        #expect(dropped.count == 1)
        #expect(dropped.first?["widgetType"] as? String == "promo_banner")
        #expect(dropped.first?["releases"] as? [String] == ["page-api@7"])
        #expect(dropped.first?["events"] as? Int == 12)
        let keys = try #require(json["newlyRequiredKeys"] as? [[String: Any]])
        #expect(keys.count == 1)
        #expect(keys.first?["key"] as? String == "imageURL")
        let lacked = try #require(keys.first?["lackedAt"] as? [String])
        #expect(lacked == [directory.file("fixtures") + "/home.json: page.sections.Index 0.widgets.Index 1.data"])
        // 5.3.0's installs move: about 40 of 50.
        let share = try #require(json["movingShare"] as? Double)
        #expect(abs(share - 0.8) < 0.05, "\(share)")

        let table = await CLI.run([
            "manifests", "diff", "--app", Self.app, "--platform", "ios", "--from", "5300", "--to", "5400",
            "--fixtures", directory.file("fixtures"), "--store", store,
        ])
        #expect(table.status == 3)
        #expect(table.standardOutput.contains("BREAKS: drops promo_banner, still sent (12 events by page-api@7"))
    }

    @Test func aBuildThatOnlyAddsOptionalKeysShips() async throws {
        let (directory, store) = try await Self.plantedStore()
        defer { directory.remove() }
        let result = await CLI.run([
            "manifests", "diff", "--app", Self.app, "--platform", "ios", "--from", "5300", "--to", "5301",
            "--fixtures", directory.file("fixtures"), "--store", store,
        ])
        #expect(result.status == 0, "\(result.standardOutput)")
        #expect(result.standardOutput.contains("OK: nothing would break."))
        let missing = await CLI.run([
            "manifests", "diff", "--app", Self.app, "--platform", "ios", "--from", "5300", "--to", "9999",
            "--store", store,
        ])
        #expect(missing.status == 1)
    }
}
