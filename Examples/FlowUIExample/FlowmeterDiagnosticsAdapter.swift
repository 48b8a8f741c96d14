import FlowmeterModels
import FlowmeterReporter
import Foundation

/// Turns each page decode's Flow-UI diagnostics into Flowmeter events: the adapter of docs/reporter.md, as an app
/// writes it. Platform-neutral, so Linux builds it.
struct FlowmeterDiagnosticsAdapter: Sendable {
    let reporter: FlowmeterReporter

    /// Call once per page decode, with the diagnostics Flow-UI reported for it and the page's backend release
    /// (the `X-Backend-Release` response header, `service@version`), which ties a spike to the deploy behind it.
    func pageDecoded(
        _ diagnostics: [any FlowUIDiagnostic], pageID: String, surface: String = "page", backendRelease: String?
    ) {
        let now = Timestamp(Date())
        for diagnostic in diagnostics {
            reporter.record(
                DiagnosticEvent(
                    kind: DiagnosticKind(rawValue: diagnostic.kindName) ?? .malformedPayload,
                    widgetType: diagnostic.widgetType,
                    // page.sections.Index 0.widgets.Index 1
                    codingPath: diagnostic.codingPath.map { $0.intValue.map { "Index \($0)" } ?? $0.stringValue }
                        .joined(separator: "."),
                    message: diagnostic.message, pageID: pageID, surface: surface, backendRelease: backendRelease,
                    occurredAt: now))
        }
        reporter.recordDecodes(1)
    }
}
