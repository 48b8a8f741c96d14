import Foundation

/// Voluntary and involuntary context switches, as Linux counts them per thread in `/proc/PID/task/TID/status`.
///
/// `/proc/PID/status` reports the thread-group leader alone (the kernel reads the leader task's `nvcsw` and
/// `nivcsw`), so a multi-threaded collector's switches are the sum over its tasks. Threads that exited between two
/// readings take their counts with them; the collectors measured here keep their threads for the whole run.
public struct ContextSwitches: Sendable, Equatable {
    /// Switches where the thread gave up the CPU itself (blocked on a lock, a socket, a condition).
    public var voluntary: Int
    /// Switches where the scheduler took the CPU away (time slice over, a woken thread preempted it).
    public var involuntary: Int

    /// Both counts, zero by default.
    public init(voluntary: Int = 0, involuntary: Int = 0) {
        self.voluntary = voluntary
        self.involuntary = involuntary
    }

    /// Both counts together.
    public var total: Int { voluntary + involuntary }

    /// The counts from the text of one `status` file, or nil when either line is missing.
    public init?(status text: String) {
        var voluntary: Int?
        var involuntary: Int?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("voluntary_ctxt_switches:") {
                voluntary = Int(line.dropFirst("voluntary_ctxt_switches:".count).trimmingCharacters(in: .whitespaces))
            } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                involuntary = Int(
                    line.dropFirst("nonvoluntary_ctxt_switches:".count).trimmingCharacters(in: .whitespaces))
            }
        }
        guard let voluntary, let involuntary else { return nil }
        self.init(voluntary: voluntary, involuntary: involuntary)
    }

    /// The sum over every live thread of process `pid` (`/proc/PID/task/*/status`), or nil when the process is gone.
    ///
    /// `procRoot` is `/proc` except in tests.
    public static func summedOverThreads(ofProcess pid: Int32, procRoot: String = "/proc") -> ContextSwitches? {
        let taskDirectory = "\(procRoot)/\(pid)/task"
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: taskDirectory) else { return nil }
        var sum = ContextSwitches()
        for task in tasks {
            // A thread may exit between the listing and the read: skip it.
            guard let text = try? String(contentsOfFile: "\(taskDirectory)/\(task)/status", encoding: .utf8),
                let switches = ContextSwitches(status: text)
            else { continue }
            sum.voluntary += switches.voluntary
            sum.involuntary += switches.involuntary
        }
        return sum
    }

    /// The switches from `earlier` to `self`.
    public static func - (later: ContextSwitches, earlier: ContextSwitches) -> ContextSwitches {
        ContextSwitches(
            voluntary: later.voluntary - earlier.voluntary, involuntary: later.involuntary - earlier.involuntary)
    }
}
