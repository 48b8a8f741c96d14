import FlowmeterModels
import FlowmeterReporter
import Foundation

/// `flowmeter-bench reporter-probe --directory DIR --endpoint URL --events N --id-prefix P [--repeats M]`: a test
/// helper, not a benchmark. It records `N` events with ids `P-0`… and `M` identical events without an id through
/// `FlowmeterReporter`, waits the one second in which docs/api.md#client-sdk promises they are on disk, then dies by
/// SIGKILL without `close()`. The kill-recovery tests start the next reporter on the same directory.
enum ReporterProbe {
    static func run(_ arguments: [String]) -> Int32 {
        var values: [String: String] = [:]
        var index = 0
        while index + 1 < arguments.count, arguments[index].hasPrefix("--") {
            values[String(arguments[index].dropFirst(2))] = arguments[index + 1]
            index += 2
        }
        guard index == arguments.count, let directory = values["directory"],
            let endpoint = values["endpoint"].flatMap(URL.init(string:)),
            let events = values["events"].flatMap(Int.init),
            let prefix = values["id-prefix"]
        else {
            print(
                "usage: flowmeter-bench reporter-probe --directory DIR --endpoint URL --events N --id-prefix P [--repeats M]"
            )
            return 2
        }
        let repeats = values["repeats"].flatMap(Int.init) ?? 0
        var configuration = ReporterConfiguration(
            endpoint: endpoint, ingestKey: "probe-key",
            client: ClientInfo(appID: "com.example.shop", appVersion: "5.2.1", platform: "ios", installID: "probe-1"),
            directory: URL(fileURLWithPath: directory))
        // No upload may start before the kill: the point is what the next process finds on disk.
        configuration.uploads.initialDelay = 3_600
        let reporter: FlowmeterReporter
        do {
            reporter = try FlowmeterReporter(configuration: configuration)
        } catch {
            print("error: \(error)")
            return 1
        }
        let now = Timestamp(Date())
        for call in 0..<(events + repeats) {
            reporter.record(
                call < events
                    ? DiagnosticEvent(
                        id: "\(prefix)-\(call)", kind: .unknownType, widgetType: "probe_widget", pageID: "home",
                        occurredAt: now)
                    : DiagnosticEvent(
                        kind: .malformedPayload, widgetType: "probe_repeat", message: "Missing key 'title'",
                        occurredAt: now))
            // One page decode per 50 diagnostics, well under the per-decode cap.
            if call % 50 == 49 { reporter.recordDecodes(1) }
        }
        reporter.recordDecodes(1)
        FileHandle.standardOutput.write(Data("recorded \(events) events and \(repeats) repeats\n".utf8))
        Thread.sleep(forTimeInterval: 1)
        kill(getpid(), SIGKILL)
        // Not reached; SIGKILL cannot be caught.
        Thread.sleep(forTimeInterval: 10)
        withExtendedLifetime(reporter) {}
        return 1
    }
}
