import Foundation
import Kafka

#if canImport(Glibc)
    import Glibc
#endif

/// librdkafka's mock cluster in a child process of this benchmark, so that a profile of this process holds the
/// collector and not the brokers.
///
/// The child is this executable again (`flowmeter-bench instructions --serve-mock-cluster`): it starts a
/// ``KafkaMockCluster`` with the pipeline's topics, prints its bootstrap servers on one line, and exits when
/// its standard input closes, so it never outlives this process, even a killed one. Valgrind does not follow the
/// child (no `--trace-children`), so it runs at native speed.
final class MockClusterProcess {
    /// The `host:port` list the collector bootstraps from.
    let bootstrapServers: [String]
    /// The child's process id.
    let processID: pid_t
    private let input: Int32

    /// The partitions of each topic.
    let partitions: Int

    /// The topics the child creates, ``partitions`` partitions each (six unless told), replicated on all three
    /// brokers. The mock cluster keeps about 5 MiB a partition, dropping the oldest records past that, so more
    /// partitions let a producer run further ahead of its consumer.
    static let topics = [
        "flowmeter.batches.v1", "flowmeter.events.v1", "flowmeter.rollups.v1", "flowmeter.alerts.v1",
        "flowmeter.deploys.v1", "flowmeter.manifests.v1",
    ]

    /// Starts the child and waits for its bootstrap line; throws when it cannot start or does not print one.
    ///
    /// `posix_spawn` with two pipes rather than Foundation's `Process`, which fails under Valgrind (it closes every
    /// descriptor, Valgrind's own included).
    init(executable: String, partitions: Int = 6) throws {
        self.partitions = partitions
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0 else { throw Self.failure("pipe failed: errno \(errno)") }
        guard pipe(&fromChild) == 0 else {
            close(toChild[0])
            close(toChild[1])
            throw Self.failure("pipe failed: errno \(errno)")
        }
        for descriptor in toChild + fromChild { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on 0 and 1; every other pipe end closes at exec.
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        let words: [String] = [executable, "instructions", "--serve-mock-cluster", String(partitions)]
        var argv = words.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, nil, &argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw Self.failure("could not start \(executable): error \(spawned)")
        }
        processID = child
        input = toChild[1]
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while !line.contains(UInt8(ascii: "\n")) {
            let n = chunk.withUnsafeMutableBytes { read(fromChild[0], $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            line += chunk[0..<n]
        }
        close(fromChild[0])
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("bootstrap: ") else {
            close(input)
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
            throw Self.failure("the mock-cluster child printed no bootstrap line: \(text)")
        }
        bootstrapServers = text.dropFirst("bootstrap: ".count).split(separator: ",").map(String.init)
    }

    private static func failure(_ text: String) -> PipelinedClient.Failure {
        PipelinedClient.Failure(description: text)
    }

    /// The child's CPU time so far (user plus system), in seconds; 0 once it is gone.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // The fields after the command name start with the state (field 3); utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Closes the child's standard input and waits for it to exit (killing it after 10 s).
    func stop() {
        close(input)
        var status: Int32 = 0
        for _ in 0..<500 {
            if waitpid(processID, &status, WNOHANG) != 0 { return }
            usleep(20_000)
        }
        kill(processID, SIGKILL)
        waitpid(processID, &status, 0)
    }

    /// The child's side: serves a mock cluster until standard input closes. Returns the exit status.
    static func serve(partitions: Int) -> Int32 {
        do {
            let cluster = try KafkaMockCluster(brokers: 3)
            for topic in topics {
                try cluster.createTopic(topic, partitions: partitions, replicationFactor: 3)
            }
            print("bootstrap: " + cluster.bootstrapServers.joined(separator: ","))
            fflush(nil)
            _ = FileHandle.standardInput.readDataToEndOfFile()
            withExtendedLifetime(cluster) {}
            return 0
        } catch {
            print("error: \(error)")
            return 1
        }
    }
}
