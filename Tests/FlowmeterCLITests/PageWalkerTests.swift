import Foundation
import Testing

@testable import FlowmeterCLI

@Suite struct PageWalkerTests {
    @Test func findsWidgetsInNestedContainers() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: try CLI.fixture("page-nested.json")))
        let widgets = try PageWalker.widgets(in: data)
        #expect(
            widgets.map(\.type) == [
                "title_block", "image_text_card", "accordion", "promo_banner", "hologram_projector", "tabs",
                "video_tile", "image_text_card", "title_block", "carousel", "image_text_card", "title_block",
            ])
        #expect(
            widgets.contains(
                PageWalker.Widget(
                    type: "hologram_projector", path: "page.sections.Index 0.widgets.Index 1.children.Index 1")))
        #expect(
            widgets.contains(
                PageWalker.Widget(
                    type: "title_block", path: "page.sections.Index 1.widgets.Index 0.tabs.Index 1.content.sheet")))
    }

    @Test func skipsPageSectionActionAndStyleTypes() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: try CLI.fixture("page-nested.json")))
        let types = Set(try PageWalker.widgets(in: data).map(\.type))
        #expect(!types.contains("page"))
        #expect(!types.contains("grid"))
        #expect(!types.contains("navigate"))
        #expect(!types.contains("bold"))
    }

    @Test func acceptsABarePageWithoutEnvelope() throws {
        let widgets = try PageWalker.widgets(in: Data(#"{"header": {"type": "title_block"}, "type": "page"}"#.utf8))
        #expect(widgets == [PageWalker.Widget(type: "title_block", path: "page.header")])
    }

    @Test(arguments: [
        ("[1, 2]", PageWalker.Failure.notAnObject), ("{\"page\": ", PageWalker.Failure.notJSON("")),
    ])
    func refusesWhatIsNotAPage(text: String, expected: PageWalker.Failure) {
        do {
            _ = try PageWalker.widgets(in: Data(text.utf8))
            Issue.record("walked \(text)")
        } catch {
            switch (error, expected) {
            case (.notJSON, .notJSON), (.notAnObject, .notAnObject): break
            default: Issue.record("\(error) for \(text)")
            }
        }
    }

    @Test func refusesNestingDeeperThanTheLimit() {
        let depth = PageWalker.maxDepth + 10
        let text = String(repeating: #"{"c":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(throws: PageWalker.Failure.tooDeep) { try PageWalker.widgets(in: Data(text.utf8)) }
    }
}
