/// A batch's events grouped by kind and widget type, built once per batch so that everything counting per series
/// (the rollups, the diagnostics metric, the per-kind outcome counts) hashes a type once per batch, not once per event.
///
/// Groups come in the order of their first event; a group's positions are in batch order, so whatever one series sees
/// arrives in the order it had in the batch.
public struct EventTypeGroups: Sendable {
    /// The events of one kind and widget type.
    public struct Group: Sendable {
        public var kind: DiagnosticKind
        public var widgetType: String?
        /// The sum of the events' `count`: how many occurrences the app saw.
        public var occurrences: UInt64
        /// The group's events in ``EventTypeGroups/positions``: `positions[range]`.
        public var range: Range<Int>

        /// How many events (not occurrences) the group holds.
        public var events: Int { range.count }
    }

    /// Every group, in order of its first event.
    public private(set) var groups: [Group] = []
    /// Positions in the events array the groups were built from, group after group.
    public private(set) var positions: [Int] = []

    /// Groups `events`.
    public init(_ events: [DiagnosticEvent]) {
        guard !events.isEmpty else { return }
        var indexByKey: [Key: Int] = [:]
        var groupOf = [Int](repeating: 0, count: events.count)
        var members: [Int] = []
        // Consecutive events often repeat a type (a flood is one type): skip the hash for those.
        var last = -1
        for position in events.indices {
            let kind = events[position].kind
            let widgetType = events[position].widgetType
            var group: Int
            if last >= 0 && groups[last].kind == kind && groups[last].widgetType == widgetType {
                group = last
            } else if let found = indexByKey[Key(kind: kind, widgetType: widgetType)] {
                group = found
            } else {
                group = groups.count
                indexByKey[Key(kind: kind, widgetType: widgetType)] = group
                groups.append(Group(kind: kind, widgetType: widgetType, occurrences: 0, range: 0..<0))
                members.append(0)
            }
            last = group
            groupOf[position] = group
            members[group] += 1
            groups[group].occurrences &+= UInt64(clamping: events[position].count)
        }
        var start = 0
        for group in groups.indices {
            groups[group].range = start..<start
            start += members[group]
        }
        positions = [Int](repeating: 0, count: events.count)
        for position in events.indices {
            let group = groupOf[position]
            positions[groups[group].range.upperBound] = position
            groups[group].range = groups[group].range.lowerBound..<(groups[group].range.upperBound + 1)
        }
    }

    private struct Key: Hashable {
        var kind: DiagnosticKind
        var widgetType: String?
    }
}
