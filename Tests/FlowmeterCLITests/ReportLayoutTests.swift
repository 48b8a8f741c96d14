import Detector
import FlowmeterModels
import Foundation
import Testing

@testable import FlowmeterCLI

/// The report's layout rules: labels that never collide, names never cut, colours that follow how good a value is,
/// owners' teams on the actions, and the gates section.
@Suite struct ReportLayoutTests {
    @Test func deployLabelsFinishingMinutesApartGetLanesOfTheirOwn() {
        // Seven deploys within twenty minutes of one week: the demo's case that used to print on top of each other.
        let labels = (0..<7).map { (label: "page-api@2026.12.01-\($0)", x: 300 + Double($0) * 1.5) }
        let placed = ReportCharts.layOut(labels, from: 20, to: 700)
        #expect(Set(placed.map(\.lane)).count == 7)
        for (index, a) in placed.enumerated() {
            for b in placed[(index + 1)...] where a.lane == b.lane {
                Issue.record("\(a.label) and \(b.label) share lane \(a.lane)")
            }
        }
        // Far-apart labels share the first lane; one near the right edge is anchored at its end to stay inside.
        let spread = ReportCharts.layOut([("a@1", 30), ("b@2", 400), ("c@3", 695)], from: 20, to: 700)
        #expect(spread.map(\.lane) == [0, 0, 0])
        #expect(spread.last?.anchor == "end")
    }

    @Test func barLabelsAreWholeHoweverLong() {
        let svg = ReportCharts.bars(
            title: "Adoption",
            rows: [(label: "com.example.reader 3.5.0", share: 0.4, caption: "40%", color: "#4269d0")])
        #expect(svg.contains(">com.example.reader 3.5.0</text>"))
        #expect(!svg.contains("…"))
    }

    @Test func decodeCleanColoursFollowHowGoodTheRateIs() {
        #expect(ReportCharts.goodness(0.26) == "#d03b2f")
        #expect(ReportCharts.goodness(0.995) == "#3ca951")
        #expect(ReportCharts.goodness(0.9) == "#efb118")
        // 92% is between amber and green, not the red of 26%.
        #expect(ReportCharts.goodness(0.92) != ReportCharts.goodness(0.26))
        #expect(ReportCharts.goodness(0.92) != ReportCharts.goodness(0.9))
    }

    @Test func actionsAreGroupedByTeamAndTheHTMLHasTheNewSections() throws {
        var report = try ReportModelTests.report()
        report.hasOwners = true
        for index in report.actions.indices {
            report.actions[index].team = report.actions[index].kind == .gate ? "immersive" : nil
        }
        #expect(report.actionsByTeam.first?.team == "immersive")
        #expect(report.actionsByTeam.last?.team == nil)
        let html = report.html
        #expect(html.contains("<h3 class=\"team\">Team immersive</h3>"))
        #expect(html.contains("<h3 class=\"team\">No owner</h3>"))
        #expect(html.contains("<h2>Gates you can drop soon</h2>"))
        #expect(html.contains("<h2>Incidents</h2>"))
        // Every cell names its column for the phone layout.
        #expect(html.contains("<td data-label=\"Type\">"))
        let markdown = report.markdown
        #expect(markdown.contains("### Team immersive"))
        #expect(markdown.contains("## Gates you can drop soon"))
    }
}
