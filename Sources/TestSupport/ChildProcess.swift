import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program a test runs as a child process: started with `posix_spawn`, standard input from /dev/null, standard
/// output and error captured to files, reaped with `waitpid`.
///
/// Every wait is bounded. Releasing an instance whose child still runs kills it, so a failed test leaves nothing
/// behind. The status is the exit code, or the signal number when a signal ended the child, as Foundation reports it.
public final class ChildProcess: Sendable {
    /// Why a child could not be started or did not finish.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened.
        public let description: String

        /// Makes a failure saying `description`.
        public init(_ description: String) {
            self.description = description
        }
    }

    /// How a run to completion ended and what it printed.
    public struct Result: Sendable {
        /// The exit code (the signal number when killed).
        public var status: Int32
        /// Standard output.
        public var output: String
        /// Standard error.
        public var errors: String
    }

    // Signalled only through signal(_:), which knows whether it was reaped.
    private let processID: pid_t
    private let directory: TemporaryDirectory
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `path` with `arguments` in this process's working directory and environment.
    public init(_ path: String, _ arguments: [String]) throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-child")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory.file("stdout"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory.file("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Descriptors are inherited unless marked close-on-exec, and many in a test process are not (sockets of
        // other tests' clients, pipes other children read to their end): the child must hold none of them open.
        Self.closeInheritedDescriptors(&actions)
        var cArguments = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        // posix_spawn and waitpid rather than Foundation's Process, whose exit notification was seen never to arrive
        // under the test runner (see PostgresServer).
        let spawned = posix_spawn(&pid, path, &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw Failure("cannot run \(path): errno \(spawned)") }
        processID = pid
    }

    deinit {
        if isRunning {
            kill(processID, SIGKILL)
            _ = waitForExit(timeout: .seconds(10))
        }
    }

    /// Runs `path arguments` to completion, killing it after `timeout`; returns its status and output.
    public static func run(_ path: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws
        -> Result
    {
        let child = try ChildProcess(path, arguments)
        var status = await child.exited(within: timeout)
        if status == nil {
            child.signal(SIGKILL)
            status = await child.exited(within: .seconds(10))
        }
        guard let status else { throw Failure("\(path) \(arguments.prefix(2)) survived SIGKILL") }
        return Result(status: status, output: child.output, errors: child.errors)
    }

    /// The child's process id, for reading `/proc/<pid>` (its memory, its open descriptors); signal it through
    /// ``signal(_:)``, which knows whether it was reaped.
    public var processIdentifier: Int32 { processID }

    /// Whether the child has not exited yet (reaps it when it has).
    public var isRunning: Bool { reap() == nil }

    /// The status once the child exited, else -1.
    public var status: Int32 { reap() ?? -1 }

    /// Everything the child wrote to standard output so far.
    public var output: String { read("stdout") }

    /// Everything the child wrote to standard error so far.
    public var errors: String { read("stderr") }

    /// Sends `number` to the child unless it was already reaped.
    public func signal(_ number: Int32) {
        // Checked under the lock so that a reaped (and possibly reused) process id is never signalled.
        exitStatus.withLock { status in
            if status == nil { kill(processID, number) }
        }
    }

    /// Waits (blocking, at most `timeout`) for the child to exit; returns its status, or nil while it still runs.
    public func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = reap() { return status }
            if ContinuousClock.now >= deadline { return nil }
            usleep(20_000)
        }
    }

    /// Waits (suspending, at most `timeout`) for the child to exit; returns its status, or nil while it still runs.
    public func exited(within timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = reap() { return status }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends SIGTERM, waits (blocking, at most `timeout`), then SIGKILL; returns the status.
    @discardableResult
    public func terminate(timeout: Duration) -> Int32 {
        signal(SIGTERM)
        if let status = waitForExit(timeout: timeout) { return status }
        signal(SIGKILL)
        return waitForExit(timeout: .seconds(10)) ?? -1
    }

    /// Like ``terminate(timeout:)``, suspending instead of blocking.
    @discardableResult
    public func stop(timeout: Duration) async -> Int32 {
        signal(SIGTERM)
        if let status = await exited(within: timeout) { return status }
        signal(SIGKILL)
        return await exited(within: .seconds(10)) ?? -1
    }

    private func reap() -> Int32? {
        exitStatus.withLock { known in
            if let known { return known }
            var raw: Int32 = 0
            let waited = waitpid(processID, &raw, WNOHANG)
            if waited == 0 { return nil }
            // ECHILD: something else reaped the child; its status is lost.
            guard waited == processID else {
                known = -1
                return -1
            }
            // WIFEXITED, WEXITSTATUS and WTERMSIG are macros Swift cannot import.
            known = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
            return known
        }
    }

    /// Adds closing every descriptor from 3 up to `actions`.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        // glibc 2.34+ has posix_spawn_file_actions_addclosefrom_np, but Swift's Glibc module does not import it.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"),
            unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3) == 0
        {
            return
        }
        // glibc ignores a close action on a descriptor that is no longer open.
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    private func read(_ name: String) -> String {
        String(decoding: FileManager.default.contents(atPath: directory.file(name)) ?? Data(), as: UTF8.self)
    }
}
