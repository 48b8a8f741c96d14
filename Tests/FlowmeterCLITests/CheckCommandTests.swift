import Foundation
import Testing

/// `flowmeter check` against the seeded store (see ``SeededStore``).
@Suite struct CheckCommandTests {
    @Test func nestedPayloadFailsOnTypesSomeVersionsCannotRender() async throws {
        let store = try SeededStore()
        let result = await CLI.run(
            ["check", try CLI.fixture("page-nested.json"), "--format", "json", "--app", "com.example.shop"]
                + store.window)
        #expect(result.status == 3)
        let json = try CLI.json(result)
        // docs/api.md#query-output's keys, and the additive `freshness`.
        #expect(json["freshness"] is [String: Any])
        #expect(
            Set(json.keys).subtracting(["freshness"]) == [
                "from", "to", "payload", "maxUnknownShare", "widgets", "passed", "types", "arrangements",
            ])
        #expect(json["widgets"] as? Int == 12)
        #expect(json["passed"] as? Bool == false)
        #expect(json["maxUnknownShare"] as? Double == 0.005)
        let types = try #require(json["types"] as? [[String: Any]])
        #expect(
            Set(types[0].keys) == [
                "widgetType", "occurrences", "paths", "known", "likelyTypoOf", "maxUnknownShare", "overThreshold",
                "problems", "additiveKeys", "apps",
            ])
        func type(_ name: String) throws -> [String: Any] {
            try #require(types.first { $0["widgetType"] as? String == name })
        }
        let hologram = try type("hologram_projector")
        #expect(hologram["overThreshold"] as? Bool == true)
        #expect(hologram["paths"] as? [String] == ["page.sections.Index 0.widgets.Index 1.children.Index 1"])
        let app = try #require((hologram["apps"] as? [[String: Any]])?.first)
        #expect(Set(app.keys) == ["appID", "installs", "unknownInstalls", "unknownShare", "versions"])
        // HyperLogLog estimates: 100 installs, 40 of them on 5.2.1.
        #expect(abs((app["installs"] as? Int ?? 0) - 100) <= 2)
        #expect(abs((app["unknownShare"] as? Double ?? 0) - 0.4) <= 0.01)
        let versions = try #require(app["versions"] as? [[String: Any]])
        #expect(
            Set(versions[0].keys) == ["appVersion", "installs", "installShare", "renders", "source", "missingKeys"])
        // No manifests in this store: every version is judged as before, by the capabilities it sends.
        #expect(versions.allSatisfy { $0["source"] as? String == "capabilities" })
        let problems = try #require(hologram["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["kind"] as? String == "unknownType")
        #expect(problems.first?["versions"] as? [String] == ["5.2.1"])
        #expect(problems.first?["key"] is NSNull)
        #expect(versions.map { $0["renders"] as? Bool } == [false, true, true])

        let titles = try type("title_block")
        #expect(titles["occurrences"] as? Int == 3)
        #expect(titles["maxUnknownShare"] as? Double == 0)
        #expect(titles["overThreshold"] as? Bool == false)
        // Widgets no version registers are unknown to every version.
        #expect(try type("carousel")["maxUnknownShare"] as? Double == 1)
        #expect(try type("tabs")["known"] as? Bool == false)
    }

    @Test func safePayloadPassesWithExitZero() async throws {
        let store = try SeededStore()
        let result = await CLI.run(
            ["check", try CLI.fixture("page-safe.json"), "--app", "com.example.shop"] + store.window)
        #expect(result.status == 0, "\(result.standardOutput)")
        #expect(result.standardOutput.contains("OK: no type is unknown to more than 0.5%"))
    }

    @Test func typosAreFlaggedAgainstKnownTypes() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["check", try CLI.fixture("page-typo.json"), "--format", "json"] + store.window)
        #expect(result.status == 3)
        let types = try #require(try CLI.json(result)["types"] as? [[String: Any]])
        let typos = Dictionary(
            uniqueKeysWithValues: types.map { ($0["widgetType"] as! String, $0["likelyTypoOf"] as? String) })
        #expect(typos["hologram_projecter"] == "hologram_projector")
        #expect(typos["title_blok"] == "title_block")
        #expect(typos["image_text_card"] == .some(nil))

        let table = await CLI.run(
            ["check", try CLI.fixture("page-typo.json"), "--app", "com.example.shop"] + store.window)
        #expect(table.standardOutput.contains("typo of hologram_projector?"))
        #expect(table.standardOutput.contains("FAIL: 2 types are unknown"))
        #expect(table.standardOutput.contains("  hologram_projecter title_blok"))
        #expect(table.standardOutput.split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    @Test func versionsWithoutCapabilitiesRenderWhatTheyNeverReportedUnknown() async throws {
        let store = try SeededStore()
        let result = await CLI.run(
            ["check", try CLI.fixture("page-safe.json"), "--format", "json", "--app", "com.example.reader"]
                + store.window)
        let types = try #require(try CLI.json(result)["types"] as? [[String: Any]])
        let banner = try #require(types.first { $0["widgetType"] as? String == "promo_banner" })
        let app = try #require((banner["apps"] as? [[String: Any]])?.first)
        // 1.9 reported promo_banner unknown: its 5 of 25 installs would not render it.
        #expect(app["unknownShare"] as? Double == 0.2)
        let renders = (app["versions"] as? [[String: Any]])?.map { $0["renders"] as? Bool }
        #expect(renders == [false, true])
        // title_block never appeared in the reader's diagnostics and it sends no capabilities: nobody knows it there.
        let title = try #require(types.first { $0["widgetType"] as? String == "title_block" })
        #expect(title["maxUnknownShare"] as? Double == 1)
    }

    @Test func thresholdDecidesTheExitStatus() async throws {
        let store = try SeededStore()
        let lenient = await CLI.run(
            ["check", try CLI.fixture("page-safe.json"), "--app", "com.example.reader", "--max-unknown-share", "100%"]
                + store.window)
        #expect(lenient.status == 0)
        let strict = await CLI.run(
            ["check", try CLI.fixture("page-safe.json"), "--app", "com.example.reader", "--max-unknown-share", "0.1"]
                + store.window)
        #expect(strict.status == 3)
    }

    @Test func csvHasOneRowPerTypeAppAndVersion() async throws {
        let store = try SeededStore()
        let result = await CLI.run(
            ["check", try CLI.fixture("page-safe.json"), "--format", "csv", "--app", "com.example.shop"] + store.window)
        let rows = result.standardOutput.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(
            rows[0]
                == "widgetType,occurrences,known,likelyTypoOf,appID,appVersion,versionInstalls,installShare,renders,appUnknownShare,overThreshold,source,missingKeys"
        )
        #expect(rows.count == 1 + 4 * 3)
    }
}
