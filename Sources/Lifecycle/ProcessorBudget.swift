import Foundation

/// How many processors this process may actually use: the CPUs its affinity mask allows (`taskset`, a pinned
/// container) and, under a cgroup CPU quota (a Kubernetes CPU limit), the quota rounded up. Foundation's
/// `activeProcessorCount` reports every online CPU whatever the mask or quota, so a pinned collector would start a
/// thread per machine core and make them take turns on its one.
public enum ProcessorBudget {
    /// The processors available to this process, at least 1.
    public static func available() -> Int {
        var count = affinityCount() ?? ProcessInfo.processInfo.activeProcessorCount
        if let quota = cgroupQuota() { count = min(count, quota) }
        return max(1, count)
    }

    /// The CPUs in this process's affinity mask (`Cpus_allowed` of `/proc/self/status`; Glibc's module does not
    /// export `sched_getaffinity`), or nil when it cannot be read.
    static func affinityCount(status: String = "/proc/self/status") -> Int? {
        guard let text = try? String(contentsOfFile: status, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Cpus_allowed:") {
            return cpuCount(mask: line.dropFirst("Cpus_allowed:".count))
        }
        return nil
    }

    /// The CPUs in a kernel CPU mask: hex words separated by commas (`ff,00000003`).
    static func cpuCount(mask: Substring) -> Int? {
        var count = 0
        for character in mask where character != "," && !character.isWhitespace {
            guard let nibble = character.hexDigitValue else { return nil }
            count += nibble.nonzeroBitCount
        }
        return count > 0 ? count : nil
    }

    /// The cgroup CPU quota in whole processors (rounded up), or nil when there is none: cgroup v2's `cpu.max`
    /// (`max 100000` means none), else cgroup v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us` (-1 means none).
    static func cgroupQuota(root: String = "/sys/fs/cgroup") -> Int? {
        if let line = try? String(contentsOfFile: root + "/cpu.max", encoding: .utf8) {
            return quota(cgroupV2: line)
        }
        guard let quota = try? String(contentsOfFile: root + "/cpu/cpu.cfs_quota_us", encoding: .utf8),
            let period = try? String(contentsOfFile: root + "/cpu/cpu.cfs_period_us", encoding: .utf8)
        else { return nil }
        return Self.quota(microseconds: quota, period: period)
    }

    /// Whole processors from a cgroup v2 `cpu.max` line (`<quota> <period>` or `max <period>`).
    static func quota(cgroupV2 line: String) -> Int? {
        let fields = line.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, fields[0] != "max" else { return nil }
        return quota(microseconds: String(fields[0]), period: String(fields[1]))
    }

    /// Whole processors, rounded up, from a quota and period in microseconds; nil for no quota (negative).
    static func quota(microseconds: String, period: String) -> Int? {
        guard let quota = Int(microseconds.trimmingCharacters(in: .whitespacesAndNewlines)), quota > 0,
            let period = Int(period.trimmingCharacters(in: .whitespacesAndNewlines)), period > 0
        else { return nil }
        return (quota + period - 1) / period
    }
}
