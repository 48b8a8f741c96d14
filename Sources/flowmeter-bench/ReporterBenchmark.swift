import FlowmeterModels
import FlowmeterReporter
import Foundation
import Synchronization

/// `flowmeter-bench reporter [--events N]`: what the client SDK costs an app. The time one `record` call takes,
/// the bytes it writes to disk, and the bytes uploaded per 1,000 diagnostics with and without pre-aggregation.
///
/// The workload is what a Flow-UI host records: page decodes of five pages, each decode reporting ten diagnostics
/// drawn from that page's four recurring problems (an unknown type, a malformed payload, a dropped element, a
/// duplicate id), none with an `id`, plus a run where every event carries its own id so nothing merges.
enum ReporterBenchmark {
    static func run(_ arguments: [String]) -> Int32 {
        var events = 100_000
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--events": events = Int(value) ?? events
            default:
                print("usage: flowmeter-bench reporter [--events N]")
                return 2
            }
            index += 2
        }
        let result = Result {
            try BenchmarkRun(events: max(1_000, events)).run()
        }
        switch result {
        case .success: return 0
        case .failure(let error):
            print("error: \(error)")
            return 1
        }
    }
}

/// One benchmark run.
private struct BenchmarkRun {
    let events: Int

    func run() throws {
        print("FlowmeterReporter \(FlowmeterReporter.sdkVersion), \(events) record calls per run, one decode per 10")
        print("")
        print("record (disk first)              ns/call   bytes written/event")
        for (label, withIDs) in [("no ids, identical ones merge", false), ("unique ids, nothing merges", true)] {
            let (nanoseconds, bytes) = try recordCost(withIDs: withIDs)
            print(
                "  " + pad(label, 30) + pad(String(format: "%.0f", nanoseconds), 9, right: true)
                    + pad(String(format: "%.1f", bytes), 22, right: true))
        }
        print("")
        print("upload per 1,000 events           pre-aggregated   not aggregated")
        let aggregatedJSON = try uploadBytes(aggregates: true, gzip: false)
        let plainJSON = try uploadBytes(aggregates: false, gzip: false)
        let aggregatedGzip = try uploadBytes(aggregates: true, gzip: true)
        let plainGzip = try uploadBytes(aggregates: false, gzip: true)
        for (label, left, right) in [
            ("requests", aggregatedJSON.requests, plainJSON.requests),
            ("events in the bodies", aggregatedJSON.events, plainJSON.events),
            ("JSON body bytes", aggregatedJSON.bytes, plainJSON.bytes),
            ("gzip body bytes (as sent)", aggregatedGzip.bytes, plainGzip.bytes),
        ] {
            print("  " + pad(label, 30) + pad(String(left), 17, right: true) + pad(String(right), 17, right: true))
        }
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }

    /// The page decodes' diagnostics: page `p` has four recurring problems; decode `d` reports ten of them.
    static func workload(count: Int, withIDs: Bool) -> [DiagnosticEvent] {
        let now = Timestamp(Date())
        let pages = ["home", "deals", "search", "product_detail", "account"]
        var problems: [[DiagnosticEvent]] = []
        for (position, page) in pages.enumerated() {
            problems.append([
                DiagnosticEvent(
                    kind: .unknownType, widgetType: "hologram_projector",
                    codingPath: "page.sections.Index \(position).widgets.Index 1",
                    message: "Unknown widget type 'hologram_projector'", pageID: page, surface: "page",
                    backendRelease: "page-api@2026.11.30-2", occurredAt: now),
                DiagnosticEvent(
                    kind: .malformedPayload, widgetType: "image_text_card",
                    codingPath: "page.sections.Index 2.widgets.Index 0", message: "Missing key 'imageURL'",
                    pageID: page, surface: "page", backendRelease: "page-api@2026.11.30-2", occurredAt: now),
                DiagnosticEvent(
                    kind: .droppedElement, codingPath: "page.sections.Index 3.widgets.Index 2",
                    message: "Element without a type", pageID: page, surface: "sheet",
                    backendRelease: "page-api@2026.11.30-2", occurredAt: now),
                DiagnosticEvent(
                    kind: .duplicateID, widgetType: "product_grid", codingPath: "page.sections.Index 0.widgets.Index 3",
                    message: "Duplicate id 'grid-3'", pageID: page, surface: "page",
                    backendRelease: "page-api@2026.11.30-2", occurredAt: now),
            ])
        }
        var events: [DiagnosticEvent] = []
        events.reserveCapacity(count)
        for index in 0..<count {
            let decode = index / 10
            var event = problems[decode % pages.count][(index * 7 + decode) % 4]
            if withIDs { event.id = UUID().uuidString }
            events.append(event)
        }
        return events
    }

    /// Nanoseconds per `record` call and bytes written to disk per event.
    func recordCost(withIDs: Bool) throws -> (Double, Double) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flowmeter-bench-reporter-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = configuration(directory: directory, transport: CountingTransport())
        // Nothing may be evicted or sent while measuring what lands on disk.
        configuration.storage.maxBytes = 1 << 40
        configuration.uploads.initialDelay = 86_400
        let reporter = try FlowmeterReporter(configuration: configuration)
        let workload = Self.workload(count: events, withIDs: withIDs)
        let clock = ContinuousClock()
        let started = clock.now
        for (index, event) in workload.enumerated() {
            reporter.record(event)
            if index % 10 == 9 { reporter.recordDecodes(1) }
        }
        let elapsed = clock.now - started
        let finished = Mutex(false)
        Task {
            await reporter.close()
            finished.withLock { $0 = true }
        }
        while !finished.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
        let written = try FileManager.default.subpathsOfDirectory(atPath: directory.path).reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: directory.path + "/" + name))?[.size]
            return total + ((size as? NSNumber)?.intValue ?? 0)
        }
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        return (nanoseconds / Double(events), Double(written) / Double(events))
    }

    /// Bytes uploaded for 1,000 events of the workload, and in how many requests.
    func uploadBytes(aggregates: Bool, gzip: Bool) throws -> (bytes: Int, requests: Int, events: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flowmeter-bench-reporter-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = CountingTransport()
        var configuration = configuration(directory: directory, transport: transport)
        configuration.batching.aggregatesIdenticalEvents = aggregates
        configuration.uploads.usesGzip = gzip
        let reporter = try FlowmeterReporter(configuration: configuration)
        for (index, event) in Self.workload(count: 1_000, withIDs: false).enumerated() {
            reporter.record(event)
            if index % 10 == 9 { reporter.recordDecodes(1) }
        }
        let outcome = Mutex<FlushOutcome?>(nil)
        Task {
            let result = await reporter.flush(timeoutInterval: 60)
            await reporter.close()
            outcome.withLock { $0 = result }
        }
        while outcome.withLock({ $0 }) == nil { Thread.sleep(forTimeInterval: 0.01) }
        guard outcome.withLock({ $0 }) == .delivered else {
            throw BenchmarkError("flush ended \(String(describing: outcome.withLock { $0 }))")
        }
        return transport.totals.withLock { ($0.bytes, $0.requests, $0.events) }
    }

    func configuration(directory: URL, transport: CountingTransport) -> ReporterConfiguration {
        var configuration = ReporterConfiguration(
            endpoint: URL(string: "http://127.0.0.1:9")!, ingestKey: "bench",
            client: ClientInfo(
                appID: "com.example.shop", appVersion: "5.2.1", build: "5210", platform: "ios", osVersion: "18.1",
                installID: "3F2A9C1E-6B7D-4E8F-9A0B-1C2D3E4F5A6B"),
            directory: directory)
        configuration.transport = transport
        configuration.conditions = .always
        configuration.observesAppLifecycle = false
        return configuration
    }
}

/// A transport that answers 202 at once and counts what it was given: the benchmark measures the SDK, not a
/// network.
private final class CountingTransport: ReporterTransport {
    struct Totals {
        var bytes = 0
        var requests = 0
        var events = 0
    }

    let totals = Mutex(Totals())

    func send(_ request: UploadRequest) async throws -> UploadResponse {
        // The event count is read from the uncompressed body only; gzip runs report the same batches.
        let events = request.header("Content-Encoding") == nil ? Self.countEvents(request.body) : 0
        totals.withLock {
            $0.bytes += request.body.count
            $0.requests += 1
            $0.events += events
        }
        return UploadResponse(status: 202, body: Array(#"{"accepted":1,"dropped":0,"diagnostics":[]}"#.utf8))
    }

    static func countEvents(_ body: [UInt8]) -> Int {
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        return (object?["events"] as? [Any])?.count ?? 0
    }
}
