import Foundation

/// The real `flowmeter` executable, built next to the test bundle, for tests that run it as a subprocess.
///
/// `swift build` (or `--build-tests`) must have built it; ``path`` is nil otherwise, so tests can skip or fail
/// with ``requiredPath()``.
public enum FlowmeterExecutable {
    /// The executable's path, or nil when it was not built.
    public static var path: String? {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // The test runner sits in the build directory itself or in an .xctest bundle two levels below it.
        let candidates = [
            bundle.appendingPathComponent("flowmeter"),
            bundle.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("flowmeter"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }?.path
    }

    /// The executable's path, or a failure telling to build it first.
    public static func requiredPath() throws -> String {
        guard let path else {
            throw ChildProcess.Failure("no flowmeter executable next to the test bundle: run swift build first")
        }
        return path
    }

    /// Runs `flowmeter arguments` to completion (killed after `timeout`); returns its status and output.
    public static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws
        -> ChildProcess.Result
    {
        try await ChildProcess.run(requiredPath(), arguments, timeout: timeout)
    }

    /// Starts `flowmeter serve --listen 127.0.0.1:<free port> arguments` and waits (at most `within`, on up to
    /// `attempts` ports) for `/healthz` to answer 200.
    ///
    /// Unless `arguments` name a `--spool`, the server gets one in a fresh temporary directory, removed with the
    /// returned process: the default (`./flowmeter-spool`) would be shared by every test, and a spool directory
    /// takes one collector at a time. A `--salt VALUE` is passed as `--salt-file` in that directory instead, as an
    /// operator would (a secret on the command line is visible in `ps`, and serve warns about it).
    public static func serve(_ arguments: [String], within: Duration = .seconds(30), attempts: Int = 1) async throws
        -> ServerProcess
    {
        var arguments = arguments
        var scratch: TemporaryDirectory?
        func directory() throws -> TemporaryDirectory {
            if let scratch { return scratch }
            let made = try TemporaryDirectory(prefix: "flowmeter-spool")
            scratch = made
            return made
        }
        if !arguments.contains("--spool") {
            arguments += ["--spool", try directory().file("spool")]
        }
        if let index = arguments.firstIndex(of: "--salt"), index + 1 < arguments.count {
            let file = try directory().file("salt")
            try Array(arguments[index + 1].utf8).withUnsafeBufferPointer { bytes in
                try Data(buffer: bytes).write(to: URL(fileURLWithPath: file))
            }
            arguments.replaceSubrange(index...index + 1, with: ["--salt-file", file])
        }
        return try await ServerProcess.start(requiredPath(), within: within, attempts: attempts, keeping: scratch) {
            port in
            ["serve", "--listen", "127.0.0.1:\(port)"] + arguments
        }
    }
}
