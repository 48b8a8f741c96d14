public import FlowmeterModels
public import Foundation

/// The client SDK apps embed: it writes every diagnostic to disk first, pre-aggregates identical ones, uploads
/// them in paced, gzip-compressed batches that keep their id across retries, obeys `Retry-After`, and reports what
/// it had to drop (docs/api.md#client-sdk).
///
/// ```swift
/// let reporter = try FlowmeterReporter(configuration: ReporterConfiguration(
///     endpoint: URL(string: "https://diagnostics.example.com")!, ingestKey: "k-shop-…",
///     client: ClientInfo(appID: "com.example.shop", appVersion: "5.2.1", platform: "ios", installID: "…"),
///     directory: cachesDirectory.appendingPathComponent("flowmeter")))
/// reporter.record(DiagnosticEvent(kind: .unknownType, widgetType: "hologram_projector", occurredAt: Timestamp(Date())))
/// reporter.recordDecodes(1)
/// ```
///
/// Thread-safe: call it from any thread or task. `record` and `recordDecodes` never block on the network; what
/// they record is on disk within a second (normally within milliseconds). A reporter started on a directory
/// where an earlier process was killed sends what that process left. One reporter per directory at a time: it holds
/// a lock on the directory until ``close()`` or its release.
public final class FlowmeterReporter: Sendable {
    /// This SDK's version, sent as `client.sdkVersion` when the configuration leaves it nil.
    public static let sdkVersion = flowmeterVersion

    let engine: ReporterEngine
    #if canImport(UIKit) && !os(watchOS)
        private let lifecycle: AppLifecycleObserver?
    #endif

    /// Creates a reporter and starts its upload loop; throws when `configuration.directory` cannot be created, and
    /// ``ReporterError`` with code ``ReporterError/Code/directoryInUse`` when another reporter (in this process or
    /// another, such as an app extension) holds the directory.
    ///
    /// Batches an earlier run left in the directory are picked up in the background and sent first.
    public init(configuration: ReporterConfiguration) throws {
        engine = try ReporterEngine(configuration: configuration)
        #if canImport(UIKit) && !os(watchOS)
            lifecycle = configuration.observesAppLifecycle ? AppLifecycleObserver(engine: engine) : nil
        #endif
    }

    deinit {
        engine.abandon()
    }

    /// Records one diagnostic: appended to the open batch (or merged into an identical one without an `id`).
    ///
    /// Returns in microseconds and never touches the network. Strings are cut to the contract's limits and a
    /// `count` below 1 counts as 1. Past the caps (new events per page decode, distinct keys per batch) a new event
    /// is counted as `cap_exceeded` instead; an identical one always merges. Does nothing after ``close()``.
    public func record(_ event: DiagnosticEvent) {
        engine.record(event)
    }

    /// Adds `count` page decodes, the denominator the collector divides diagnostics by; call it after each page
    /// decode (after recording that decode's diagnostics). It also starts a new page decode for the
    /// events-per-decode cap.
    public func recordDecodes(_ count: Int) {
        engine.recordDecodes(count)
    }

    /// Seals the open batch and sends everything queued now, ignoring pacing but not `Retry-After`, backoff or the
    /// upload conditions; returns when it is all delivered, refused, or `timeout` passed.
    ///
    /// Concurrent flushes share the one upload loop, so no batch is ever sent twice because of them. Returns
    /// `.delivered` only when everything queued when the flush began got a 202.
    @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
    public func flush(timeout: Duration) async -> FlushOutcome {
        let (seconds, attoseconds) = timeout.components
        return await engine.flush(timeout: Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// ``flush(timeout:)`` with the timeout in seconds, for iOS 15.
    public func flush(timeoutInterval: TimeInterval) async -> FlushOutcome {
        await engine.flush(timeout: timeoutInterval)
    }

    /// Stops the reporter: seals the open batch (the next reporter on the directory sends it), cancels an upload
    /// in flight (kept for later, without penalty), ends waiting flushes with `.closed`, and returns once
    /// everything recorded is on disk.
    public func close() async {
        await engine.close()
    }

    /// Deletes everything queued (open and sealed batches) and the counts not yet reported, before returning;
    /// for a user who opts out. Recording afterwards starts afresh.
    public func clearAll() {
        engine.clearAll()
    }
}
