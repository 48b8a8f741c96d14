import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// An outside program the operations tests run (promtool, amtool, systemd-analyze, the YAML helper), with a bounded
/// wait: a hung tool is killed and its run reported as failed.
struct Tool: Sendable {
    /// What one run printed and how it ended.
    struct Run: Sendable {
        var status: Int32
        var output: String
        var errors: String
        var succeeded: Bool { status == 0 }
        /// Both streams, for a failure message.
        var transcript: String { "exit \(status)\n\(output)\n\(errors)" }
    }

    let path: String

    static let promtool = Tool(path: "/usr/bin/promtool")
    static let amtool = Tool(path: "/usr/bin/amtool")
    static let prometheus = Tool(path: "/usr/bin/prometheus")
    static let systemdAnalyze = Tool(path: "/usr/bin/systemd-analyze")
    static let python = Tool(path: "/usr/bin/python3")

    var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// True when `systemd-analyze verify` accepts a trivial unit here (some containers cannot run it at all).
    static let canVerifyUnits: Bool = {
        guard systemdAnalyze.isInstalled else { return false }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-probe-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let unit = "[Unit]\nDescription=probe\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n"
        guard (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil,
            (try? unit.write(to: directory.appendingPathComponent("probe.service"), atomically: true, encoding: .utf8))
                != nil,
            let run = try? systemdAnalyze.run(["verify", "./probe.service"], in: directory.path, timeout: .seconds(60))
        else { return false }
        return run.succeeded
    }()

    /// True when the Debian `python3-yaml` module imports, which ``yamlToJSON(_:)`` needs.
    static let hasYAML: Bool = {
        guard python.isInstalled, let run = try? python.run(["-c", "import yaml"], timeout: .seconds(20)) else {
            return false
        }
        return run.succeeded
    }()

    /// True when the PyPI `kubernetes-validate` module (pinned in scripts/install-deps.sh) imports.
    static let hasKubernetesValidate: Bool = {
        guard python.isInstalled,
            let run = try? python.run(["-c", "import kubernetes_validate"], timeout: .seconds(20))
        else { return false }
        return run.succeeded
    }()

    /// Runs the tool with `arguments` in `directory`, killing it after `timeout`.
    func run(_ arguments: [String], in directory: String? = nil, timeout: Duration = .seconds(120)) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes on their own threads so a chatty tool never blocks on a full pipe.
        let outputData = Reader(output.fileHandleForReading)
        let errorData = Reader(errors.fileHandleForReading)
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return Run(status: -1, output: outputData.text(), errors: "killed after \(timeout)\n" + errorData.text())
        }
        return Run(status: process.terminationStatus, output: outputData.text(), errors: errorData.text())
    }

    /// The YAML documents of `file` as JSON values, through `scripts/ops/yaml-to-json.py`.
    static func yamlToJSON(_ file: String) throws -> [Any] {
        let run = try python.run([Repository.path("scripts/ops/yaml-to-json.py"), file], timeout: .seconds(30))
        guard run.succeeded else { throw ToolFailure(message: "\(file) is not valid YAML: \(run.errors)") }
        let value = try JSONSerialization.jsonObject(with: Data(run.output.utf8), options: [.fragmentsAllowed])
        return value as? [Any] ?? []
    }
}

/// A tool that ran and said no.
struct ToolFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Drains a pipe on a background thread until end of file.
private final class Reader: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var isDone = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            let bytes = handle.readDataToEndOfFile()
            condition.lock()
            data = bytes
            isDone = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Everything read, waiting at most five seconds for the end of the stream.
    func text() -> String {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(5)
        while !isDone && condition.wait(until: deadline) {}
        return String(decoding: data, as: UTF8.self)
    }
}
