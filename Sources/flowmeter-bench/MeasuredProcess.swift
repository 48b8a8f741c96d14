import Foundation
import IngestBenchmarks

#if canImport(Glibc)
    import Glibc
#endif

/// A child process under measurement: its CPU seconds, context switches and peak RSS come from /proc, so they are the
/// process's own, not the load generator's.
final class MeasuredProcess {
    let name: String
    let process: Process
    let logURL: URL

    /// Starts `executable` with `arguments`, pinned to `cpu` with taskset when given and available.
    init(
        name: String, executable: String, arguments: [String], environment: [String: String] = [:], cpu: Int?,
        logDirectory: URL
    ) throws {
        self.name = name
        let process = Process()
        var command = [executable] + arguments
        if let cpu, FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") {
            command = ["/usr/bin/taskset", "-c", String(cpu)] + command
        }
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        logURL = logDirectory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        InterruptCleanup.register(child: process.processIdentifier)
    }

    var pid: Int32 { process.processIdentifier }

    /// CPU time, context switches over all threads, thread count and peak RSS from /proc; zeros once the process
    /// is gone.
    func counters() -> ProcessCounters {
        ProcessCounters.read(pid: pid)
            ?? ProcessCounters(cpuSeconds: 0, contextSwitches: ContextSwitches(), threads: 0, peakRSSMiB: 0)
    }

    /// Whether `pause()` stops the process; off, it keeps running while another target is measured.
    var pausesWhenIdle = true

    /// Stops the process (SIGSTOP) while another target is measured, so its idle timers take no CPU from it.
    func pause() {
        if pausesWhenIdle, process.isRunning { kill(pid, SIGSTOP) }
    }

    /// Lets a paused process run again (SIGCONT).
    func resume() {
        if process.isRunning { kill(pid, SIGCONT) }
    }

    /// Waits until `GET path` on `port` answers 200, or throws after `timeout` seconds with the log's tail.
    func waitUntilServing(port: UInt16, path: String, timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        while Date() < deadline {
            if !process.isRunning { break }
            if let connection = HTTPConnection(host: "127.0.0.1", port: port),
                let (status, _) = connection.exchange(request), status == 200 || status == 404
            {
                return
            }
            usleep(100_000)
        }
        let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        throw BenchmarkError("\(name) did not start serving on port \(port):\n\(log.suffix(2000))")
    }

    func stop() {
        defer { InterruptCleanup.unregister(child: pid) }
        guard process.isRunning else { return }
        process.terminate()
        // A stopped process keeps SIGTERM pending until it runs again.
        resume()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(pid, SIGKILL) }
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
