import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster on a free loopback port, for tests of the PostgreSQL rollup store.
///
/// `start()` runs `initdb` and `pg_ctl start` from Debian's server package (as the `postgres` user when the tests
/// run as root, since both refuse root), with fsync off and trust authentication on 127.0.0.1 only. `stop()` stops
/// it with `pg_ctl stop -m fast` and deletes the data directory; releasing the instance does the same.
/// `PostgresServer.shared` is one cluster per test process, stopped at exit; `makeDatabase()` gives each test its
/// own empty database so tests stay independent.
public final class PostgresServer: Sendable {
    /// Why a cluster could not be started.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened, with the tool's output.
        public let description: String
    }

    /// The directory holding `initdb`, `pg_ctl` and `psql`.
    public let binDirectory: String
    private let directory: TemporaryDirectory
    private let state = Mutex<(port: Int, isRunning: Bool)>((port: 0, isRunning: false))

    /// Finds the server binaries (`FLOWMETER_PG_BIN`, else the newest `/usr/lib/postgresql/*/bin`) and prepares an
    /// empty directory; throws a `Failure` naming the package to install when they are missing.
    public init() throws {
        guard let bin = Self.findBinDirectory() else {
            throw Failure(
                description: "PostgreSQL server binaries not found (looked in $FLOWMETER_PG_BIN and "
                    + "/usr/lib/postgresql/*/bin); install Debian's `postgresql` package (make test does)")
        }
        binDirectory = bin
        directory = try TemporaryDirectory(prefix: "flowmeter-pg")
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else {
                throw Failure(description: "Running as root but there is no `postgres` user to run the server as")
            }
            guard chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                throw Failure(description: "chown \(directory.path) to postgres failed: errno \(errno)")
            }
        }
    }

    deinit { stop() }

    /// Runs `initdb` (once) and starts the server; returns its connection URL. Retries on a port taken meanwhile.
    @discardableResult
    public func start() throws -> String {
        if let running = state.withLock({ $0.isRunning ? $0.port : nil }) { return url(port: running) }
        let data = directory.file("data")
        if !FileManager.default.fileExists(atPath: data) {
            try run(
                "initdb",
                ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C"],
                timeout: 120)
            // Only 127.0.0.1 is listened on; trust there keeps tests password-free and nothing else can connect.
            try "host all all 127.0.0.1/32 trust\nlocal all all trust\n"
                .write(toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
        }
        var lastFailure: (any Error)?
        for _ in 0..<5 {
            let port = Int(try ServerProcess.freeLoopbackPort())
            let options = [
                "-c listen_addresses=127.0.0.1", "-p \(port)", "-k \(directory.path)", "-c fsync=off",
                "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200",
            ].joined(separator: " ")
            do {
                try run(
                    "pg_ctl",
                    ["-D", data, "-l", directory.file("server.log"), "-w", "-t", "60", "-o", options, "start"],
                    timeout: 90)
                state.withLock { $0 = (port: port, isRunning: true) }
                return url(port: port)
            } catch {
                lastFailure = error
            }
        }
        let log = (try? String(contentsOfFile: directory.file("server.log"), encoding: .utf8)) ?? ""
        throw Failure(
            description: "PostgreSQL did not start: \(lastFailure.map { "\($0)" } ?? "?")\n\(log.suffix(2000))")
    }

    /// The URL of the `postgres` database while the server runs.
    public var url: String? { state.withLock { $0.isRunning ? url(port: $0.port) : nil } }

    /// Creates an empty database with a unique name and returns its URL; starts the server first if needed.
    public func makeDatabase(prefix: String = "test") throws -> String {
        try start()
        let name = "\(prefix)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let port = state.withLock { $0.port }
        try run(
            "psql",
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q",
                "-c", "CREATE DATABASE \(name)",
            ],
            timeout: 60)
        return url(port: port, database: name)
    }

    /// Stops the server (`pg_ctl stop -m fast`) and deletes its directory; safe to call more than once.
    public func stop() {
        let wasRunning = state.withLock { state in
            defer { state.isRunning = false }
            return state.isRunning
        }
        if wasRunning {
            try? run("pg_ctl", ["-D", directory.file("data"), "-m", "fast", "-w", "-t", "30", "stop"], timeout: 45)
        }
        directory.remove()
    }

    /// One cluster for the whole test process, started on first use and stopped when the process exits.
    public static func shared() throws -> PostgresServer {
        try sharedServer.withLock { server in
            if let server { return server }
            let made = try PostgresServer()
            try made.start()
            server = made
            atexit { PostgresServer.stopShared() }
            return made
        }
    }

    private static let sharedServer = Mutex<PostgresServer?>(nil)

    private static func stopShared() {
        let server = sharedServer.withLock { server in
            defer { server = nil }
            return server
        }
        server?.stop()
    }

    private func url(port: Int, database: String = "postgres") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    private func run(_ tool: String, _ arguments: [String], timeout: Double) throws {
        let executable = binDirectory + "/" + tool
        // Both initdb and pg_ctl refuse to run as root.
        // `env -C`: the postgres user may not be allowed into the test's working directory.
        let command = ["/usr/bin/env", "-C", directory.path, executable] + arguments
        let argv = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command
        let output = directory.file("\(tool)-\(UUID().uuidString).out")
        // posix_spawn and waitpid rather than Foundation's Process, whose exit notification was seen never to arrive
        // for runuser under the test runner (the child stayed a zombie).
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw Failure(description: "Cannot run \(argv[0]): errno \(spawned)") }
        let deadline = Date(timeIntervalSinceNow: timeout)
        var status: Int32 = 0
        var waited: pid_t = 0
        repeat {
            waited = waitpid(pid, &status, WNOHANG)
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw Failure(description: "\(tool) did not finish within \(Int(timeout)) s")
            }
            if waited == 0 { usleep(20_000) }
        } while waited == 0
        // ECHILD: something else in the process reaped the child; its status is lost, and what follows checks.
        if waited < 0 && errno == ECHILD { status = 0 }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: output)
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }

    private static func findBinDirectory() -> String? {
        let manager = FileManager.default
        if let configured = ProcessInfo.processInfo.environment["FLOWMETER_PG_BIN"],
            manager.isExecutableFile(atPath: configured + "/pg_ctl")
        {
            return configured
        }
        let versions = (try? manager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
            .map { "/usr/lib/postgresql/\($0)/bin" }
            .first {
                manager.isExecutableFile(atPath: $0 + "/pg_ctl") && manager.isExecutableFile(atPath: $0 + "/initdb")
            }
    }
}
