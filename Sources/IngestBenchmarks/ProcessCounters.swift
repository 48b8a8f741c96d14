import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What `/proc` says about one process at one moment: CPU time, context switches over all its threads, its thread
/// count and its peak resident set size.
public struct ProcessCounters: Sendable, Equatable {
    /// User plus system CPU seconds of every thread so far (`/proc/PID/stat` fields 14 and 15).
    public var cpuSeconds: Double
    /// Context switches summed over every live thread.
    public var contextSwitches: ContextSwitches
    /// `Threads:` in `/proc/PID/status`.
    public var threads: Int
    /// `VmHWM:` in `/proc/PID/status`, in MiB: the peak RSS since the process started.
    public var peakRSSMiB: Double

    /// The counters as given.
    public init(cpuSeconds: Double, contextSwitches: ContextSwitches, threads: Int, peakRSSMiB: Double) {
        self.cpuSeconds = cpuSeconds
        self.contextSwitches = contextSwitches
        self.threads = threads
        self.peakRSSMiB = peakRSSMiB
    }

    /// Reads the counters of process `pid`, or nil when it is gone. `procRoot` is `/proc` except in tests.
    public static func read(pid: Int32, procRoot: String = "/proc") -> ProcessCounters? {
        guard let stat = try? String(contentsOfFile: "\(procRoot)/\(pid)/stat", encoding: .utf8),
            let status = try? String(contentsOfFile: "\(procRoot)/\(pid)/status", encoding: .utf8),
            let ticks = cpuTicks(stat: stat),
            let switches = ContextSwitches.summedOverThreads(ofProcess: pid, procRoot: procRoot)
        else { return nil }
        let fields = statusFields(status)
        return ProcessCounters(
            cpuSeconds: Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))), contextSwitches: switches,
            threads: Int(fields["Threads"] ?? "") ?? 0,
            peakRSSMiB: (Double(fields["VmHWM"]?.split(separator: " ").first ?? "") ?? 0) / 1024)
    }

    /// utime plus stime in clock ticks from the text of `/proc/PID/stat`, or nil when it does not parse.
    ///
    /// The command name (field 2) is in parentheses and may hold spaces, so fields are counted after the last `)`.
    public static func cpuTicks(stat text: String) -> Int? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so utime (14) and stime (15) sit at offsets 11 and 12.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// `Name:\tvalue` lines of a `status` file, values trimmed.
    public static func statusFields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }
}
