import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `flowmeter` executable, built next to the test bundle, run as a subprocess for the end-to-end test.
enum EndToEndProcess {
    /// The executable, or a failed requirement telling to build it first.
    static func executable() throws -> URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0])
        let candidates = [
            bundle.deletingLastPathComponent().appendingPathComponent("flowmeter"),
            bundle.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("flowmeter"),
        ]
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "no flowmeter executable next to the test bundle: run swift build first")
    }

    /// Runs `flowmeter arguments` to completion (killed after `timeout`); returns status, standard output and error.
    static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws
        -> (status: Int32, output: String, errors: String)
    {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let handle = EndToEndChild(process)
        return try await HTTPTestClient.onThread {
            // Read both pipes at once so a chatty child never blocks on a full pipe.
            let errorData = EndToEndChild.Reader(errors.fileHandleForReading)
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            handle.waitForExit(timeout: timeout)
            return (handle.status, String(decoding: outputData, as: UTF8.self), errorData.text())
        }
    }
}

/// A child process that tests hand between threads; it is only started, signalled and waited for.
final class EndToEndChild: @unchecked Sendable {
    let process: Process

    init(_ process: Process) {
        self.process = process
    }

    /// Waits up to `timeout` for the process to exit, then kills it.
    func waitForExit(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Sends SIGTERM and waits (bounded) for the exit status.
    func terminate(timeout: Duration) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        waitForExit(timeout: timeout)
        return status
    }

    var status: Int32 { process.isRunning ? -1 : process.terminationStatus }

    /// Reads a pipe to its end on a thread of its own.
    final class Reader: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()

        init(_ handle: FileHandle) {
            let thread = Thread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
            thread.name = "end-to-end-reader"
            thread.start()
        }

        func text() -> String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }
}
