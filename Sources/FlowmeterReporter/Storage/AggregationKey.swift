import FlowmeterModels

/// What makes two events without an `id` the same for pre-aggregation: everything but `count` and `occurredAt`.
struct AggregationKey: Hashable, Sendable {
    let kind: String
    let widgetType: String?
    let codingPath: String?
    let pageID: String?
    let surface: String?
    let backendRelease: String?
    let message: String?

    init(_ event: DiagnosticEvent) {
        kind = event.kind.rawValue
        widgetType = event.widgetType
        codingPath = event.codingPath
        pageID = event.pageID
        surface = event.surface
        backendRelease = event.backendRelease
        message = event.message
    }
}

extension DiagnosticEvent {
    /// The event with its strings cut to the contract's limits (as the collector would cut them) and `count` at
    /// least 1, so that keys and sizes are those of what is sent.
    var limited: DiagnosticEvent {
        var event = self
        func cut(_ value: String?, _ limit: Int) -> String? { value.map { FieldLimits.truncate($0, to: limit) } }
        event.id = cut(id, FieldLimits.other)
        event.widgetType = cut(widgetType, FieldLimits.widgetType)
        event.codingPath = cut(codingPath, FieldLimits.codingPath)
        event.message = cut(message, FieldLimits.message)
        event.pageID = cut(pageID, FieldLimits.other)
        event.surface = cut(surface, FieldLimits.other)
        event.backendRelease = cut(backendRelease, FieldLimits.other)
        if event.kind.rawValue.utf8.count > FieldLimits.other,
            let kind = DiagnosticKind(rawValue: FieldLimits.truncate(kind.rawValue, to: FieldLimits.other))
        {
            event.kind = kind
        }
        event.count = max(1, count)
        return event
    }
}
