public import FlowmeterModels
public import Rollups

/// Finds widget types never seen before in release builds of an app: first seen, under any of ``kinds``, inside
/// the window.
///
/// The store's first-seen table covers all history, so "new" means no release event of the type under any of these
/// kinds ever came earlier; a type first met in a debug build (a developer trying a new widget) is still new the day
/// release builds first meet it.
public struct NewTypeFinder: Sendable {
    /// The kinds whose widget types count as occurrences of a type.
    public var kinds: [DiagnosticKind]

    /// Creates a finder; by default every named kind that carries a widget type counts.
    public init(kinds: [DiagnosticKind] = [.unknownType, .malformedPayload, .duplicateID, .droppedElement]) {
        self.kinds = kinds
    }

    /// The types whose earliest release occurrence lies in [`from`, `to`), earliest first (ties by app, type).
    ///
    /// Throws what the reader throws.
    public func newTypes(reader: some RollupReader, from: Timestamp, to: Timestamp, appID: String? = nil) throws
        -> [NewType]
    {
        var earliest: [TypeKey: NewType] = [:]
        for kind in kinds {
            for seen in try reader.firstSeen(appID: appID, kind: kind, buildConfiguration: .release)
            where !seen.widgetType.isEmpty {
                let key = TypeKey(appID: seen.appID, widgetType: seen.widgetType)
                if let known = earliest[key], known.firstSeen <= seen.firstSeen { continue }
                earliest[key] = NewType(
                    appID: seen.appID, widgetType: seen.widgetType, kind: kind, firstSeen: seen.firstSeen)
            }
        }
        return earliest.values.filter { from <= $0.firstSeen && $0.firstSeen < to }
            .sorted {
                if $0.firstSeen != $1.firstSeen { return $0.firstSeen < $1.firstSeen }
                if $0.appID != $1.appID { return $0.appID < $1.appID }
                return $0.widgetType < $1.widgetType
            }
    }

    private struct TypeKey: Hashable {
        var appID: String
        var widgetType: String
    }
}
