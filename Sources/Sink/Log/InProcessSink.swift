import FlowmeterModels
import Foundation
public import Lifecycle
public import RollupStore
import Rollups
import Synchronization

/// The sink of a collector without Kafka (`flowmeter serve --kafka none --store …`): the collector hands it each
/// batch's records and it builds the rollups with the same steps as a sink reading the batches topic
/// (``PartitionSteps``), as partition 0 of a log that lives in this process.
///
/// The log's offsets continue from the one the store holds, so the store's position and dedupe state carry over a
/// restart. Records are kept in memory until their step commits: what the process had not committed when it
/// died is lost, which is what `--kafka none` trades for having no Kafka. One thread (`in-process-sink`) commits a
/// step whenever records wait (up to `maxBatch` each), and the partition's freshness every `freshnessInterval`.
public final class InProcessSink: Service {
    public let name = "in-process-sink"
    private let steps: Mutex<PartitionSteps>
    private let pending = Mutex<[[UInt8]]>([])
    private let thread = LoopThread(named: "in-process-sink")
    /// A store retry's pause (never woken: a plain bounded wait).
    private let backoff = Wakeup()
    private let isStopping = Atomic<Bool>(false)
    private let counters = Mutex<RollupSinkCounters>(RollupSinkCounters())
    private let currentStall = Mutex<SinkStall?>(nil)
    private let configuration: RollupSinkConfiguration
    private let log: RollupSink.Log

    /// A sink of `store` for `configuration`'s topic name, horizon and batch size (its brokers are not used).
    public init(configuration: RollupSinkConfiguration, store: any SinkStore, log: @escaping RollupSink.Log) {
        self.configuration = configuration
        self.log = log
        steps = Mutex(
            PartitionSteps(
                topic: configuration.batchesTopic, store: store, horizon: configuration.dedupeHorizon,
                maxEntries: configuration.dedupeMaxEntries))
    }

    /// The totals so far.
    public var totals: RollupSinkCounters { counters.withLock { $0 } }

    /// Takes the records of one batch; never blocks. Records taken after the stop began are still committed by it.
    public func append(_ records: [[UInt8]]) {
        pending.withLock { $0.append(contentsOf: records) }
        thread.wake()
    }

    /// Why the sink makes no progress now (its store step keeps failing), or nil while it does; as
    /// ``RollupSink/stall``, for `flowmeter serve`'s `/readyz`.
    public var stall: SinkStall? { currentStall.withLock { $0 } }

    /// Records taken but not yet committed.
    public var waiting: Int { pending.withLock { $0.count } }

    public func run() async throws {
        thread.start { [self] thread in loop(thread) }
        await waitForShutdown()
        isStopping.store(true, ordering: .releasing)
        thread.wake()
        await thread.join()
    }

    private func loop(_ thread: LoopThread) {
        var lastFreshness = ContinuousClock.now - configuration.freshnessInterval
        while true {
            let stopping = isStopping.load(ordering: .acquiring)
            let taken = pending.withLock { pending in
                let count = min(pending.count, configuration.maxBatch)
                let taken = Array(pending.prefix(count))
                pending.removeFirst(count)
                return (taken, pending.isEmpty)
            }
            if !taken.0.isEmpty || ContinuousClock.now - lastFreshness >= configuration.freshnessInterval {
                commit(taken.0, caughtUp: taken.1)
                lastFreshness = .now
            }
            if stopping && taken.1 { return }
            if taken.1 { thread.wait(for: .milliseconds(200)) }
        }
    }

    /// Commits `records` as the next step, retrying store errors (a fence cannot happen: no one else writes this
    /// partition, unless another process shares the store and its name, which is a misconfiguration).
    private func commit(_ records: [[UInt8]], caughtUp: Bool) {
        var delay = configuration.retryDelay
        while true {
            do {
                let outcome = try steps.withLock { steps in
                    let start = try steps.storedOffset(partition: 0) ?? 0
                    let made = try steps.makeStep(
                        partition: 0, partitions: 1,
                        records: records.enumerated().map { (start + Int64($0.offset), $0.element) },
                        caughtUpAt: caughtUp ? Timestamp(Date()) : nil)
                    var step = made.step
                    step.nextOffset = start + Int64(records.count)
                    do {
                        try steps.commit(step)
                    } catch {
                        steps.drop(partition: 0)
                        throw error
                    }
                    return made.outcome
                }
                counters.withLock { $0.addCommitted(outcome, partitionSteps: 1) }
                currentStall.withLock { $0 = nil }
                return
            } catch {
                counters.withLock { $0.errors += 1 }
                let stall =
                    (error as? RollupStoreError).flatMap { SinkStall(storeError: $0) }
                    ?? SinkStall(reason: "store_error", message: "The store refused the step: \(error)")
                currentStall.withLock { current in
                    if current?.reason == stall.reason { current?.message = stall.message } else { current = stall }
                }
                log(.error, "store step failed; retrying", ["error": String(describing: error)])
            }
            if isStopping.load(ordering: .acquiring) && delay > .seconds(8) { return }
            backoff.wait(for: delay)
            delay = min(delay * 2, .seconds(30))
        }
    }
}
