import FlowmeterModels
import Foundation
import TestSupport
import Testing

@testable import FlowmeterReporter

/// What the reporter tests share: a queue directory, a configuration for tests, and events to record.
struct ReporterFixture {
    static let client = ClientInfo(
        appID: "com.example.shop", appVersion: "5.2.1", build: "5210", platform: "ios", osVersion: "18.1",
        installID: "3F2A9C1E-6B7D-4E8F-9A0B-1C2D3E4F5A6B")

    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-reporter")
    }

    /// A configuration for `endpoint` on the fixture's directory: no app lifecycle, no upload conditions, and the
    /// backoff's jitter pinned to its cap so waits are exact.
    func configuration(
        endpoint: URL, clock: (any ReporterClock)? = nil, key: String = "k-test-ingest"
    ) -> ReporterConfiguration {
        var configuration = ReporterConfiguration(
            endpoint: endpoint, ingestKey: key, client: Self.client, directory: directory.url)
        if let clock { configuration.clock = clock }
        configuration.conditions = .always
        configuration.observesAppLifecycle = false
        configuration.randomUnit = { 1 }
        return configuration
    }

    /// The batch files in the queue directory (open and sealed), sorted.
    func batchFiles() -> [String] {
        let folder = directory.file("v1")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".batch") || $0.hasSuffix(".open") }.sorted()
    }

    /// An unknown-type event seen at `clock`'s time.
    static func event(
        id: String? = nil, widgetType: String = "hologram_projector", page: String = "home", count: Int = 1,
        at date: Date
    ) -> DiagnosticEvent {
        DiagnosticEvent(
            id: id, kind: .unknownType, widgetType: widgetType, codingPath: "page.sections.Index 0.widgets.Index 1",
            message: "Unknown widget type '\(widgetType)'", pageID: page, surface: "page",
            backendRelease: "page-api@2026.11.30-2", count: count, occurredAt: Timestamp(date))
    }
}

/// Runs `flush` on its own task, so a test can move the clock while it waits.
func startFlush(_ reporter: FlowmeterReporter, timeout: TimeInterval = 86_400) -> Task<FlushOutcome, Never> {
    Task { await reporter.flush(timeoutInterval: timeout) }
}

/// The outcome of `flush`, or `.timedOut` with a recorded issue when it has not finished after `seconds` of real
/// time: a reporter on a hand-moved clock never times out by itself, so a stuck flush fails the test instead of
/// hanging it.
func finished(
    _ flush: Task<FlushOutcome, Never>, within seconds: Double = 180, sourceLocation: SourceLocation = #_sourceLocation
) async -> FlushOutcome {
    let outcome = await withTaskGroup(of: FlushOutcome?.self) { group in
        group.addTask { await flush.value }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        flush.cancel()
        return first
    }
    guard let outcome else {
        Issue.record("the flush had not finished after \(seconds) s", sourceLocation: sourceLocation)
        return .timedOut
    }
    return outcome
}

/// Flushes `reporter` with no timeout of its own clock, bounded in real time as ``finished(_:within:sourceLocation:)``.
func flushed(
    _ reporter: FlowmeterReporter, sourceLocation: SourceLocation = #_sourceLocation
) async -> FlushOutcome {
    await finished(startFlush(reporter), sourceLocation: sourceLocation)
}
