/// One target measured once on one cell: the load generator's side and the collector process's side.
public struct IngestMeasurement: Sendable {
    /// `flowmeter` or `python-peer`.
    public var target: String
    /// The conditions.
    public var cell: IngestCell
    /// 1-based round.
    public var round: Int
    /// Requests answered (any status).
    public var requests: Int
    /// Events in requests answered 202.
    public var events: Int
    /// Wall seconds of the load.
    public var elapsed: Double
    /// The collector process's CPU seconds over `window`.
    public var cpuSeconds: Double
    /// Wall seconds the CPU and context switches were counted over: the load and the settle after it.
    public var window: Double
    /// Median latency in milliseconds.
    public var p50Millis: Double
    /// 99th percentile latency in milliseconds.
    public var p99Millis: Double
    /// The collector's VmHWM after the run, MiB (the peak since the collector started).
    public var peakRSSMiB: Double
    /// Context switches of all the collector's threads over the same window as `cpuSeconds`.
    public var contextSwitches: ContextSwitches
    /// The collector's thread count after the run.
    public var threads: Int
    /// Responses by status.
    public var statusCounts: [Int: Int]
    /// Connections or exchanges that failed.
    public var failures: Int

    /// A measurement as given.
    public init(
        target: String, cell: IngestCell, round: Int, requests: Int, events: Int, elapsed: Double, cpuSeconds: Double,
        window: Double? = nil, p50Millis: Double, p99Millis: Double, peakRSSMiB: Double,
        contextSwitches: ContextSwitches, threads: Int,
        statusCounts: [Int: Int] = [:], failures: Int = 0
    ) {
        self.target = target
        self.cell = cell
        self.round = round
        self.requests = requests
        self.events = events
        self.elapsed = elapsed
        self.cpuSeconds = cpuSeconds
        self.window = window ?? elapsed
        self.p50Millis = p50Millis
        self.p99Millis = p99Millis
        self.peakRSSMiB = peakRSSMiB
        self.contextSwitches = contextSwitches
        self.threads = threads
        self.statusCounts = statusCounts
        self.failures = failures
    }

    /// Accepted events per wall second.
    public var eventsPerSecond: Double { elapsed > 0 ? Double(events) / elapsed : 0 }
    /// Requests answered per wall second.
    public var requestsPerSecond: Double { elapsed > 0 ? Double(requests) / elapsed : 0 }
    /// Accepted events per CPU second of the collector process: the figure the goal is stated in.
    public var eventsPerCPUSecond: Double { cpuSeconds > 0 ? Double(events) / cpuSeconds : 0 }
    /// The share of its core the collector used over `window`: well under 1 means the load generator (or a busy
    /// machine) set the pace, not the collector.
    public var coreShare: Double { window > 0 ? cpuSeconds / window : 0 }
    /// Voluntary context switches per request answered.
    public var voluntarySwitchesPerRequest: Double {
        requests > 0 ? Double(contextSwitches.voluntary) / Double(requests) : 0
    }
    /// Involuntary context switches per request answered.
    public var involuntarySwitchesPerRequest: Double {
        requests > 0 ? Double(contextSwitches.involuntary) / Double(requests) : 0
    }
}
