import Foundation
import Testing

/// `flowmeter check` with capability manifests (docs/api.md#capability-manifests) against the seeded store
/// (``SeededStore``: shop 5.2.1 with 40 installs, 5.3.0 with 50, 5.4.0 with 10): payloads that drop a key only old
/// versions require, nest it in an accordion or a sheet, add keys no version knows, use an arrangement old versions
/// lack, and send a type only the newest version registers; and versions without a manifest, judged as before and
/// marked so.
@Suite struct ManifestCheckTests {
    /// The seeded store with the shop's manifests uploaded through `flowmeter manifests upload`.
    static func store(versions: [String] = ["5.2.1", "5.3.0", "5.4.0"]) async throws -> SeededStore {
        let store = try SeededStore()
        for version in versions {
            let result = await CLI.run(
                ["manifests", "upload", try CLI.fixture("manifest-shop-\(version).json"), "--store", store.path])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.hasPrefix("recorded com.example.shop \(version) ios build"))
        }
        return store
    }

    static func check(_ page: String, _ store: SeededStore, format: String = "json") async throws -> CLI.Result {
        await CLI.run(["check", try CLI.fixture(page), "--format", format, "--app", "com.example.shop"] + store.window)
    }

    static func type(_ name: String, in result: CLI.Result) throws -> [String: Any] {
        let types = try #require(try CLI.json(result)["types"] as? [[String: Any]])
        return try #require(types.first { $0["widgetType"] as? String == name })
    }

    static func problems(_ type: [String: Any]) throws -> [[String: Any]] {
        try #require(type["problems"] as? [[String: Any]])
    }

    static func near(_ value: Any?, _ expected: Double) -> Bool {
        abs((value as? Double ?? -1) - expected) <= 0.02
    }

    @Test func aKeyOnlyOldVersionsRequireFailsForThoseVersionsWhereverTheWidgetNests() async throws {
        let store = try await Self.store()
        let result = try await Self.check("page-drop-key.json", store)
        #expect(result.status == 3)
        let card = try Self.type("image_text_card", in: result)
        let problems = try Self.problems(card)
        let imageURL = try #require(problems.first { $0["key"] as? String == "imageURL" })
        #expect(imageURL["kind"] as? String == "malformedPayload")
        #expect(imageURL["versions"] as? [String] == ["5.2.1"])
        #expect(Self.near(imageURL["installShare"], 0.4), "\(imageURL)")
        // The sheet in the header comes first; the accordion's child and the plain card lack it too.
        #expect(imageURL["path"] as? String == "page.header.sheet.data")
        #expect(imageURL["occurrences"] as? Int == 3)
        // A nested key: only the newer versions require a label on every badge, and one badge lacks it.
        let label = try #require(problems.first { $0["key"] as? String == "badges[].label" })
        #expect(label["versions"] as? [String] == ["5.3.0", "5.4.0"])
        #expect(label["path"] as? String == "page.sections.Index 0.widgets.Index 2.data.badges.Index 1")
        #expect(Self.near(label["installShare"], 0.6))
        #expect(problems.allSatisfy { $0["kind"] as? String == "malformedPayload" })
        let versions = try #require((card["apps"] as? [[String: Any]])?.first?["versions"] as? [[String: Any]])
        #expect(
            versions.map { $0["missingKeys"] as? [String] } == [["imageURL"], ["badges[].label"], ["badges[].label"]])
        #expect(versions.allSatisfy { $0["source"] as? String == "manifest" && $0["renders"] as? Bool == true })
        #expect(card["additiveKeys"] as? [String] == ["badges[].color"])
        #expect(card["overThreshold"] as? Bool == true)
        #expect(try CLI.json(result)["passed"] as? Bool == false)

        let table = try await Self.check("page-drop-key.json", store, format: "table")
        #expect(table.status == 3)
        #expect(table.standardOutput.contains("image_text_card lacks imageURL at page.header.sheet.data (and 2 more)"))
        #expect(table.standardOutput.contains("FAIL: 1 type lacks a key that more than 0.5% of an app's installs"))
        #expect(table.standardOutput.contains("image_text_card (badges[].label, imageURL)"))
        #expect(table.standardOutput.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(table.standardOutput)")
    }

    @Test func additiveKeysAreFineAndAnUnknownArrangementFallsBackToVertical() async throws {
        let store = try await Self.store()
        let result = try await Self.check("page-additive.json", store)
        #expect(result.status == 0, "\(result.standardOutput)")
        let card = try Self.type("image_text_card", in: result)
        #expect(try Self.problems(card).isEmpty)
        #expect(card["additiveKeys"] as? [String] == ["badges[].color", "subtitle"])
        let arrangements = try #require(try CLI.json(result)["arrangements"] as? [[String: Any]])
        #expect(arrangements.count == 1)
        #expect(arrangements.first?["arrangement"] as? String == "grid")
        #expect(arrangements.first?["fallback"] as? String == "vertical")
        #expect(arrangements.first?["paths"] as? [String] == ["page.sections.Index 0"])
        let app = try #require((arrangements.first?["apps"] as? [[String: Any]])?.first)
        #expect(app["versions"] as? [String] == ["5.2.1"])
        #expect(Self.near(app["installShare"], 0.4))

        let table = try await Self.check("page-additive.json", store, format: "table")
        #expect(table.standardOutput.contains("image_text_card adds badges[].color, subtitle: no manifest names"))
        #expect(table.standardOutput.contains("Arrangement grid (page.sections.Index 0) falls back to vertical"))
        #expect(table.standardOutput.contains("OK: no type is unknown or malformed for more than 0.5% of an app's"))
        #expect(table.standardOutput.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(table.standardOutput)")
    }

    @Test func aTypeOnlyTheNewestVersionRegistersIsUnknownToTheRest() async throws {
        let store = try await Self.store()
        let result = try await Self.check("page-newest-type.json", store)
        #expect(result.status == 3)
        let ring = try Self.type("story_ring", in: result)
        let problem = try #require(try Self.problems(ring).first)
        #expect(problem["kind"] as? String == "unknownType")
        #expect(problem["key"] is NSNull)
        #expect(problem["path"] as? String == "page.sections.Index 0.widgets.Index 0")
        #expect(problem["versions"] as? [String] == ["5.2.1", "5.3.0"])
        // 90 of the shop's 100 installs are on versions whose manifests lack it.
        #expect(Self.near(problem["installShare"], 0.9))
        #expect(Self.near(ring["maxUnknownShare"], 0.9))
        #expect(try Self.problems(try Self.type("title_block", in: result)).isEmpty)
    }

    /// The seeded capabilities say 5.3.0 and 5.4.0 register hologram_projector; their manifests decide, and 5.2.1,
    /// without a manifest, is judged by its capabilities as before and marked so.
    @Test func versionsWithoutAManifestAreJudgedAsBeforeAndMarked() async throws {
        let store = try await Self.store(versions: ["5.3.0", "5.4.0"])
        let result = try await Self.check("page-drop-key.json", store)
        let card = try Self.type("image_text_card", in: result)
        #expect(try Self.problems(card).compactMap { $0["key"] as? String } == ["badges[].label"])
        let versions = try #require((card["apps"] as? [[String: Any]])?.first?["versions"] as? [[String: Any]])
        #expect(versions.map { $0["source"] as? String } == ["capabilities", "manifest", "manifest"])
        #expect(versions.first?["missingKeys"] as? [String] == [])
        let table = try await Self.check("page-drop-key.json", store, format: "table")
        #expect(table.standardOutput.contains("No manifest: com.example.shop 5.2.1 judged by capabilities or traffic"))
        let csv = try await Self.check("page-drop-key.json", store, format: "csv")
        let rows = csv.standardOutput.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows[0].hasSuffix(",source,missingKeys"))
        #expect(rows.contains { $0.contains(",5.3.0,") && $0.hasSuffix(",manifest,badges[].label") })
    }

    @Test func typesShowsWhereEachAnswerComesFrom() async throws {
        let store = try await Self.store(versions: ["5.3.0"])
        let result = await CLI.run(["types", "--format", "json", "--app", "com.example.shop"] + store.window)
        let rows = try #require(try CLI.json(result)["types"] as? [[String: Any]])
        let hologram = try #require(rows.first { $0["widgetType"] as? String == "hologram_projector" })
        #expect(
            hologram["sources"] as? [String: [String]] == [
                "manifest": ["5.3.0"], "capabilities": ["5.2.1", "5.4.0"], "traffic": [],
            ])
        let table = await CLI.run(["types", "--app", "com.example.shop"] + store.window)
        #expect(table.standardOutput.contains("manifest+capabilities"))
    }
}
