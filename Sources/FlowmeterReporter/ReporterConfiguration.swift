public import FlowmeterModels
public import Foundation

/// Everything a ``FlowmeterReporter`` needs: where the collector is, the ingest key, who the app is, and where the
/// queue lives; every other setting has a default that suits a phone.
///
/// Printing a configuration (`print`, `String(describing:)`, `dump`) never shows the ingest key or the install id.
public struct ReporterConfiguration: Sendable {
    /// The collector's base URL, such as `https://diagnostics.example.com`; batches go to `<endpoint>/v1/diagnostics`.
    public var endpoint: URL
    /// The ingest key, sent only as `Authorization: Bearer …` to `endpoint`, never logged.
    public var ingestKey: String
    /// Who the app is. `sdkVersion` is filled in with ``FlowmeterReporter/sdkVersion`` when nil. The `installID` is
    /// the app's own value: sent only to `endpoint`, never logged.
    public var client: ClientInfo
    /// The directory the queue lives in (created when missing), such as a `flowmeter` folder in Caches. One reporter
    /// per directory at a time.
    public var directory: URL
    /// When a batch is sealed, and the pre-aggregation caps.
    public var batching = BatchPolicy()
    /// How much may wait on disk.
    public var storage = StorageLimits()
    /// Pacing, backoff and compression of uploads.
    public var uploads = UploadPolicy()
    /// When uploads may run at all (battery, Low Power Mode); see ``UploadConditions/standard``.
    public var conditions = UploadConditions.standard
    /// Whether the default transport may upload over a constrained network (Low Data Mode on Apple platforms); off
    /// by default, so an app opts in. Ignored when `transport` is set.
    public var allowsLowDataMode = false
    /// Carries uploads; nil uses a ``URLSessionTransport``.
    public var transport: (any ReporterTransport)?
    /// The time source; tests inject one they advance by hand.
    public var clock: any ReporterClock = SystemReporterClock()
    /// Called after every upload attempt with what happened, on the reporter's upload task; keep it short. It never
    /// sees the ingest key or the install id.
    public var onUpload: (@Sendable (UploadAttempt) -> Void)?
    /// Whether to seal the open batch when the app resigns active or enters the background, and to try one upload
    /// in a background task then (UIKit platforms only; ignored elsewhere).
    public var observesAppLifecycle = true
    /// A uniform random number in `0...1` for the backoff's full jitter; tests pin it.
    var randomUnit: @Sendable () -> Double = { Double.random(in: 0...1) }
    /// Called on the disk writer after each change to the queue directory, with what it was (`write <file>`,
    /// `delete <file>`, …): for crash tests that kill a process between two steps. Not for apps.
    @_spi(Testing) public var afterDiskOperation: (@Sendable (String) -> Void)?

    /// Creates a configuration with the defaults for everything else.
    public init(endpoint: URL, ingestKey: String, client: ClientInfo, directory: URL) {
        self.endpoint = endpoint
        self.ingestKey = ingestKey
        self.client = client
        self.directory = directory
    }
}

extension ReporterConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The configuration without its secrets: the key and the install id show as `<redacted>`.
    public var description: String {
        "ReporterConfiguration(endpoint: \(endpoint.absoluteString), ingestKey: <redacted>, app: \(client.appID) "
            + "\(client.appVersion) \(client.platform), installID: \(client.installID == nil ? "nil" : "<redacted>"), "
            + "directory: \(directory.path))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror that leaves the secrets out, so `dump` cannot print them either.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "endpoint": endpoint, "ingestKey": "<redacted>", "appID": client.appID,
                "appVersion": client.appVersion, "directory": directory,
            ], displayStyle: .struct)
    }
}
