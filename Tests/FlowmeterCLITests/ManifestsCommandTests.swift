import Detector
import FlowmeterCLI
import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// `flowmeter manifests upload|list|check`, and the weekly report's "Manifests out of date".
@Suite struct ManifestsCommandTests {
    @Test func uploadValidatesAndListShowsOneLinePerBuild() async throws {
        let store = try SeededStore()
        for version in ["5.2.1", "5.3.0"] {
            let result = await CLI.run(
                ["manifests", "upload", try CLI.fixture("manifest-shop-\(version).json"), "--store", store.path])
            #expect(result.status == 0)
        }
        // The same build again replaces it: still two.
        let again = await CLI.run(
            ["manifests", "upload", try CLI.fixture("manifest-shop-5.3.0.json"), "--store", store.path])
        #expect(again.status == 0)
        let json = await CLI.run(["manifests", "list", "--store", store.path, "--format", "json"])
        let listed = try #require(try CLI.json(json)["manifests"] as? [[String: Any]])
        #expect(listed.map { $0["appVersion"] as? String } == ["5.2.1", "5.3.0"])
        #expect(listed.allSatisfy { $0["uploadedAt"] is String })
        let table = await CLI.run(["manifests", "list", "--store", store.path])
        #expect(table.standardOutput.contains("5300"))
        #expect(table.standardOutput.contains("horizontal, vertical"))
        #expect(table.standardOutput.hasSuffix("2 manifests of com.example.shop.\n"))
        let none = await CLI.run(["manifests", "list", "--store", store.path, "--app", "com.example.none"])
        #expect(none.standardOutput == "No manifests for com.example.none.\n")

        let directory = try TemporaryDirectory(prefix: "flowmeter-manifest")
        defer { directory.remove() }
        let bad = directory.file("bad.json")
        try Data(
            #"{"appID": "com.example.shop", "appVersion": "5.5.0", "platform": "ios", "types": {"t": {"required": ["a..b"]}}}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: bad))
        let refused = await CLI.run(["manifests", "upload", bad, "--store", store.path])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("Key 'a..b' has an empty segment (at types.t.required.Index 0)"))
        let usage = await CLI.run(["manifests", "upload", "--store", store.path])
        #expect(usage.status == 2)
        // Nothing listens on port 1: the build pipeline's job fails with the reason.
        let unreachable = await CLI.run([
            "manifests", "upload", try CLI.fixture("manifest-shop-5.3.0.json"), "--collector", "http://127.0.0.1:1",
            "--admin-key", "k",
        ])
        #expect(unreachable.status == 1)
        #expect(unreachable.standardError.contains("no answer from http://127.0.0.1:1"))
        let keyless = await CLI.run([
            "manifests", "upload", try CLI.fixture("manifest-shop-5.3.0.json"), "--collector", "http://127.0.0.1:1",
        ])
        #expect(keyless.status == 2)
    }

    /// The seeded 5.2.1 reports hologram_projector unknown: a 5.2.1 manifest that lists it is out of date.
    @Test func checkListsManifestsTheTrafficContradicts() async throws {
        let store = try SeededStore()
        let clean = await CLI.run(["manifests", "check"] + store.window)
        #expect(clean.status == 0)
        #expect(clean.standardOutput.hasPrefix("No manifests to check"))
        _ = await CLI.run(["manifests", "upload", try CLI.fixture("manifest-shop-5.3.0.json"), "--store", store.path])
        let agreeing = await CLI.run(["manifests", "check"] + store.window)
        #expect(agreeing.status == 0)
        #expect(agreeing.standardOutput.hasPrefix("Every manifest agrees with its version's traffic: 1 checked"))

        let directory = try TemporaryDirectory(prefix: "flowmeter-manifest")
        defer { directory.remove() }
        let stale = directory.file("stale.json")
        try Data(
            #"{"appID": "com.example.shop", "appVersion": "5.2.1", "platform": "ios", "build": "5210", "types": {"hologram_projector": {"required": []}, "title_block": {"required": ["title"]}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: stale))
        _ = await CLI.run(["manifests", "upload", stale, "--store", store.path])
        let result = await CLI.run(["manifests", "check", "--format", "json"] + store.window)
        #expect(result.status == 3)
        let drift = try #require(try CLI.json(result)["drift"] as? [[String: Any]])
        #expect(drift.count == 1)
        #expect(drift.first?["appVersion"] as? String == "5.2.1")
        #expect(drift.first?["widgetType"] as? String == "hologram_projector")
        #expect(drift.first?["reason"] as? String == "listedTypeUnknown")
        #expect(drift.first?["events"] as? Int == 100)
        #expect(drift.first?["builds"] as? [String] == ["5210"])
        let table = await CLI.run(["manifests", "check"] + store.window)
        #expect(table.status == 3)
        #expect(table.standardOutput.contains("listed, yet reported unknown"))
        let csv = await CLI.run(["manifests", "check", "--format", "csv"] + store.window)
        #expect(csv.standardOutput.contains("5.2.1,ios,hologram_projector,unknownType,,listedTypeUnknown,100,5210,"))
    }

    @Test func theWeeklyReportListsManifestsOutOfDate() throws {
        let scenario = try ReportScenario.make()
        let week = ISOWeek(year: 2026, week: 48)!
        let now = Timestamp(rfc3339: "2026-12-01T09:00:00Z")!
        let without = try WeeklyReportBuilder().report(reader: scenario.store, week: week, now: now)
        #expect(without.manifestsChecked == 0)
        #expect(!without.markdown.contains("Manifests out of date"))
        #expect(!without.html.contains("id=\"manifests\""))

        // 5.2.1 calls imageURL optional, yet reports image_text_card malformed for lacking it.
        try scenario.store.recordManifest(
            CapabilityManifest(
                appID: ReportScenario.app, appVersion: "5.2.1", platform: "ios",
                types: [
                    "image_text_card": .init(required: ["title"], optional: ["imageURL"]),
                    "title_block": .init(required: ["title"]),
                ], uploadedAt: now))
        let report = try WeeklyReportBuilder().report(reader: scenario.store, week: week, now: now)
        #expect(report.manifestsChecked == 1)
        let drift = try #require(report.manifestDrift.first)
        #expect(drift.widgetType == "image_text_card" && drift.key == "imageURL")
        #expect(drift.reason == .optionalKeyRequired)
        #expect(drift.events == 20)
        #expect(report.markdown.contains("## Manifests out of date"))
        #expect(report.markdown.contains("'imageURL' is optional, yet its absence breaks it"))
        #expect(report.html.contains("<section id=\"manifests\">"))
        let json = report.jsonValue.serialized()
        #expect(json.contains(#""manifests":{"checked":1,"drift":[{"appID":"com.example.shop","appVersion":"5.2.1""#))
    }
}
