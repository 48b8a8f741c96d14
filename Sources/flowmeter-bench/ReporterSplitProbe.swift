import FlowmeterModels
@_spi(Testing) import FlowmeterReporter
import Foundation
import Synchronization

/// `flowmeter-bench reporter-split-probe --directory DIR --events N --halves 1|2`: a test helper, not a benchmark.
/// It records `N` events with ids `split-0`… through `FlowmeterReporter`, flushes to a transport that answers 413,
/// and dies by SIGKILL as soon as the reporter has written `halves` of the split's halves, before it removes the
/// original batch. The split crash tests start the next reporter on the same directory.
enum ReporterSplitProbe {
    /// Answers every upload with 413.
    struct PayloadTooLarge: ReporterTransport {
        func send(_ request: UploadRequest) async throws -> UploadResponse { UploadResponse(status: 413) }
    }

    static func run(_ arguments: [String]) -> Int32 {
        var values: [String: String] = [:]
        var index = 0
        while index + 1 < arguments.count, arguments[index].hasPrefix("--") {
            values[String(arguments[index].dropFirst(2))] = arguments[index + 1]
            index += 2
        }
        guard index == arguments.count, let directory = values["directory"],
            let events = values["events"].flatMap(Int.init), events >= 2,
            let halves = values["halves"].flatMap(Int.init), (1...2).contains(halves)
        else {
            print("usage: flowmeter-bench reporter-split-probe --directory DIR --events N --halves 1|2")
            return 2
        }
        var configuration = ReporterConfiguration(
            endpoint: URL(string: "http://127.0.0.1:9")!, ingestKey: "probe-key",
            client: ClientInfo(appID: "com.example.shop", appVersion: "5.2.1", platform: "ios", installID: "probe-1"),
            directory: URL(fileURLWithPath: directory))
        configuration.transport = PayloadTooLarge()
        configuration.conditions = .always
        configuration.observesAppLifecycle = false
        let written = Mutex(0)
        configuration.afterDiskOperation = { operation in
            guard operation.hasPrefix("write ") else { return }
            if written.withLock({ count in
                count += 1
                return count
            }) == halves {
                FileHandle.standardOutput.write(Data("killed after \(halves) of 2 halves\n".utf8))
                kill(getpid(), SIGKILL)
            }
        }
        let reporter: FlowmeterReporter
        do {
            reporter = try FlowmeterReporter(configuration: configuration)
        } catch {
            print("error: \(error)")
            return 1
        }
        let now = Timestamp(Date())
        for call in 0..<events {
            reporter.record(
                DiagnosticEvent(
                    id: "split-\(call)", kind: .unknownType, widgetType: "probe_widget", pageID: "home", occurredAt: now
                ))
        }
        reporter.recordDecodes(1)
        let done = DispatchSemaphore(value: 0)
        Task {
            // Ends only by the kill: the halves are answered 413 as well, and the flush waits on.
            _ = await reporter.flush(timeoutInterval: 60)
            done.signal()
        }
        done.wait()
        print("the split never happened")
        return 1
    }
}
