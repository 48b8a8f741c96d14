public import FlowmeterModels
public import Metrics

/// Where the events a ``RollupAggregator`` records are counted as well: the collector's
/// `flowmeter_diagnostic_events_total`, whose children are by app, build, kind and widget type.
///
/// The aggregator finds each event's series anyway, so it asks for a series' counter once, when the series starts
/// in its minute, and adds each event's `count` to it; an event it keeps in no series of its own (past the
/// aggregator's caps, in the overflow series) has its counter asked for alone. Counting that way costs an increment
/// per event instead of a lookup by two strings.
public protocol SeriesCounterSource: Sendable {
    /// The counter for `kind` and `widgetType` events of `appID` in `build`; the same one for the same arguments.
    func counter(appID: String, build: BuildConfiguration, kind: DiagnosticKind, widgetType: String?) -> Counter
}
