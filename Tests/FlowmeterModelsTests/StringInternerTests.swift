import Testing

@testable import FlowmeterModels

/// `EventTypeGroups` partitions a batch by kind and widget type exactly as a dictionary of arrays would, and the
/// decoder's `StringInterner` hands back the very string the bytes spell, cached or not.
@Suite struct EventTypeGroupsTests {
    static func events(seed: UInt64, count: Int, types: Int) -> [DiagnosticEvent] {
        var state = seed
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let kinds: [DiagnosticKind] = [
            .unknownType, .malformedPayload, DiagnosticKind(rawValue: "unknownArrangement")!,
        ]
        return (0..<count).map { _ in
            let type = next() % (types + 1)
            return DiagnosticEvent(
                kind: kinds[next() % kinds.count],
                widgetType: type == types ? nil : "widget_type_with_a_long_name_\(type)", count: next() % 5 + 1,
                occurredAt: Timestamp(secondsSinceEpoch: 1_795_942_800))
        }
    }

    @Test(arguments: [(1, 0, 3), (2, 1, 3), (3, 50, 1), (4, 50, 12), (5, 500, 40), (6, 64, 0)])
    func groupsPartitionTheBatchInFirstSeenOrder(seed: UInt64, count: Int, types: Int) {
        let events = Self.events(seed: seed, count: count, types: types)
        let grouped = EventTypeGroups(events)

        // The reference: keys in order of first appearance, each with its positions in batch order.
        var order: [String] = []
        var positions: [String: [Int]] = [:]
        for (position, event) in events.enumerated() {
            let key = "\(event.kind.rawValue)|\(event.widgetType ?? "<none>")"
            if positions[key] == nil { order.append(key) }
            positions[key, default: []].append(position)
        }
        #expect(grouped.groups.count == order.count)
        #expect(grouped.positions.sorted() == Array(events.indices))
        var next = 0
        for (group, key) in zip(grouped.groups, order) {
            #expect("\(group.kind.rawValue)|\(group.widgetType ?? "<none>")" == key)
            #expect(group.range.lowerBound == next)
            next = group.range.upperBound
            let members = Array(grouped.positions[group.range])
            #expect(members == positions[key])
            #expect(group.events == members.count)
            #expect(group.occurrences == UInt64(members.reduce(0) { $0 + events[$1].count }))
        }
        #expect(next == events.count)
    }

    @Test func equalTypesFromDifferentStorageShareAGroup() {
        let made = String(decoding: Array("a_widget_type_longer_than_fifteen".utf8), as: UTF8.self)
        let events = [made, "a_widget_type_longer_than_fifteen", made].map {
            DiagnosticEvent(kind: .unknownType, widgetType: $0, occurredAt: Timestamp(secondsSinceEpoch: 0))
        }
        let grouped = EventTypeGroups(events)
        #expect(grouped.groups.count == 1)
        #expect(grouped.groups.first?.events == 3)
    }

    /// Many distinct long values (every slot collides), repeats, short and over-long ones: each comes back equal.
    @Test func theInternerReturnsWhatTheBytesSpell() {
        var interner = StringInterner()
        var values = (0..<200).map { "coding.path.sections.Index \($0 % 70).widgets.Index \($0 % 13)" }
        values += [
            "short", "", String(repeating: "x", count: 129), String(repeating: "é", count: 40), "😀 emoji text ok",
        ]
        for round in 0..<3 {
            for value in values.shuffled() {
                let interned = Array(value.utf8).withUnsafeBytes { interner.string($0) }
                #expect(interned == value, "round \(round)")
            }
        }
    }
}
