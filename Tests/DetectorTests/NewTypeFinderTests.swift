import Detector
import FlowmeterModels
import Rollups
import Testing

@Suite struct NewTypeFinderTests {
    @Test func onlyTypesFirstSeenInReleaseBuildsInsideTheWindowAreNew() throws {
        let history = History()
        let from = History.time("2026-11-30T06:00:00Z")
        let to = History.time("2026-11-30T10:00:00Z")
        history.events(1, kind: .malformedPayload, type: "title_block", at: History.time("2026-11-20T06:00:00Z"))
        history.events(5, type: "title_block", at: History.time("2026-11-30T07:00:00Z"))
        history.events(5, type: "hologram_projector", at: History.time("2026-11-30T08:47:00Z"))
        // Seen in a debug build last week: still new to release builds today.
        history.events(1, type: "quiz_card", at: History.time("2026-11-23T08:00:00Z"), build: .debug)
        history.events(2, kind: .duplicateID, type: "quiz_card", at: History.time("2026-11-30T09:00:00Z"))
        history.events(9, type: "late_widget", at: History.time("2026-11-30T10:00:00Z"))

        let found = try NewTypeFinder().newTypes(reader: history.store, from: from, to: to)
        #expect(found.map(\.widgetType) == ["hologram_projector", "quiz_card"])
        #expect(found.map(\.kind) == [.unknownType, .duplicateID])
        #expect(found.first?.firstSeen == History.time("2026-11-30T08:47:00Z"))
    }
}
