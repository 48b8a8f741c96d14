import Detector
import Foundation
import Testing

@Suite struct OwnerRulesTests {
    static let file = """
        {"defaultTeam": "app-platform",
         "rules": [
           {"widgetType": "hologram_*", "team": "immersive"},
           {"appID": "com.example.reader", "widgetType": "*", "team": "newsroom"},
           {"page": "product_*", "team": "catalog"},
           {"widgetType": "*_text_card", "appID": "com.example.shop", "team": "content"}
         ]}
        """

    @Test(arguments: [
        ("hologram_projector", "com.example.shop", [String](), "immersive"),
        ("hologram_", "com.example.shop", [], "immersive"),
        ("hologram", "com.example.shop", [], "app-platform"),
        ("image_text_card", "com.example.reader", [], "newsroom"),
        ("image_text_card", "com.example.shop", ["product_detail"], "catalog"),
        ("image_text_card", "com.example.shop", ["home"], "content"),
        ("imgae_text_card", "com.example.shop", [], "content"),
        ("image_card", "com.example.shop", [], "app-platform"),
        ("", "com.example.reader", [], "newsroom"),
    ])
    func firstMatchingRuleWinsElseTheDefault(type: String, app: String, pages: [String], team: String) throws {
        let rules = try OwnerRules(json: Data(Self.file.utf8))
        #expect(rules.team(appID: app, widgetType: type, pages: pages) == team)
    }

    @Test(arguments: [
        ("*", "", true), ("*", "anything", true), ("a*b", "ab", true), ("a*b", "aXXb", true), ("a*b", "aXXbc", false),
        ("*card", "image_text_card", true), ("*a*a*", "banana", true), ("*a*a*a*a*", "banana", false),
        ("exact", "exact", true), ("exact", "Exact", false), ("ab", "a", false),
    ])
    func globsMatchRunsOfAnyCharacters(pattern: String, text: String, matches: Bool) {
        #expect(OwnerRules.Rule.glob(pattern, matches: text) == matches)
    }

    @Test func withoutADefaultAnUnmatchedFindingHasNoTeam() throws {
        let rules = try OwnerRules(json: Data(#"{"rules": [{"page": "home", "team": "home"}]}"#.utf8))
        #expect(rules.team(appID: "a", widgetType: "t", pages: ["cart"]) == nil)
        #expect(rules.team(appID: "a", widgetType: "t", pages: ["cart", "home"]) == "home")
        #expect(rules.teams == ["home"])
    }

    @Test(arguments: [
        #"{"rules": [{"team": "nobody-matches"}]}"#, #"{"rules": [{"page": "home", "team": " "}]}"#, "not json",
        #"{"rules": [{"page": "home"}]}"#,
    ])
    func aBrokenFileIsAnError(text: String) {
        #expect(throws: DetectorError.self) { try OwnerRules(json: Data(text.utf8)) }
    }

    @Test func theExampleOwnersFileParsesAndNamesTheTeamsTheAlertmanagerExampleRoutes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let rules = try OwnerRules(contentsOf: root.appendingPathComponent("Deploy/owners.example.json").path)
        let alertmanager = try String(
            contentsOf: root.appendingPathComponent("Dashboards/alertmanager/alertmanager.yml"), encoding: .utf8)
        #expect(!rules.teams.isEmpty)
        for team in rules.teams {
            #expect(alertmanager.contains("team=\"\(team)\""), "no route for team \(team)")
        }
    }
}
