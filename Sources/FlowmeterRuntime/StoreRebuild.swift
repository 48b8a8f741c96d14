import Foundation
import Kafka
import Lifecycle
public import RollupStore
public import Sink

/// `flowmeter store rebuild`: builds a store from the batches topic, from its beginning as far as retention reaches,
/// with the sink's own code (``RollupSink``: the same steps, dedupe and fenced commits), and ends when every
/// partition reached the end offset it had when the rebuild began.
///
/// The sink runs in a consumer group of its own (`flowmeter-rebuild-…`, so the running sinks' group and its
/// committed offsets are not disturbed): like every sink it reads each partition from the offset the store holds,
/// which for an empty store is the oldest record retention left. Deploys and manifests are read along the way, and
/// the rebuild ends once their topics, too, have nothing more to read. Blocking: call ``run(progress:)`` off the
/// cooperative pool.
public final class StoreRebuild: Sendable {
    /// Where one partition of the batches topic stands.
    public struct Partition: Sendable, Hashable {
        /// The partition.
        public var partition: Int
        /// The oldest offset retention left when the rebuild began.
        public var low: Int64
        /// The end offset (the next to be written) when the rebuild began: where the rebuild stops.
        public var end: Int64
        /// The store's next offset for the partition (where it stands).
        public var position: Int64

        /// Records of the partition read so far.
        public var consumed: Int64 { max(0, min(position, end) - low) }
        /// Records of the partition between its oldest and its end.
        public var total: Int64 { max(0, end - low) }
        /// Whether the partition reached its end.
        public var isDone: Bool { position >= end }
    }

    /// What the rebuild has done so far.
    public struct Progress: Sendable, Hashable {
        /// Each partition of the batches topic, by number.
        public var partitions: [Partition]
        /// The sink's counters: batches counted, copies skipped, events, records dead-lettered.
        public var counters: RollupSinkCounters
        /// Time since the rebuild began.
        public var elapsed: Duration

        /// Records read over every partition.
        public var consumed: Int64 { partitions.reduce(0) { $0 + $1.consumed } }
        /// Records to read over every partition.
        public var total: Int64 { partitions.reduce(0) { $0 + $1.total } }
        /// Records read per second so far; nil before the first second.
        public var rate: Double? {
            let seconds = elapsed / .seconds(1)
            return seconds >= 1 ? Double(consumed) / seconds : nil
        }
        /// Time left at the rate so far; nil while unknown.
        public var remaining: Duration? {
            guard let rate, rate > 0 else { return nil }
            return .seconds(Double(total - consumed) / rate)
        }
        /// Whether every partition reached its end.
        public var isDone: Bool { partitions.allSatisfy(\.isDone) }
    }

    private let configuration: RollupSinkConfiguration
    private let store: any RollupStore
    private let sink: RollupSink
    /// The partitions' bounds when the rebuild began.
    public let start: [Partition]

    /// Finds the batches topic's partitions and end offsets and makes the sink; reads nothing until ``run(progress:)``.
    ///
    /// `configuration.groupID` is replaced by a group of the rebuild's own. Throws ``SinkError`` when Kafka cannot be
    /// asked or the topic does not exist, ``RollupStoreError`` when the store cannot be read.
    public init(
        configuration: RollupSinkConfiguration, store: any RollupStore, log: @escaping RollupSink.Log,
        metadataTimeout: Duration = .seconds(10)
    ) throws {
        var configuration = configuration
        configuration.groupID = "flowmeter-rebuild-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)"
        self.configuration = configuration
        self.store = store
        let topic = configuration.batchesTopic
        let servers = configuration.bootstrapServers.joined(separator: ",")
        var probeConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: configuration.bootstrapServers, groupID: configuration.groupID)
        probeConfiguration.clientID = "flowmeter-rebuild"
        probeConfiguration.additionalProperties = configuration.consumerProperties
        let probe: KafkaConsumer
        do {
            probe = try KafkaConsumer(configuration: probeConfiguration)
        } catch {
            throw SinkError(.consumerFailed, "could not make a Kafka client for \(servers): \(error)")
        }
        defer { probe.close() }
        let count: Int
        do {
            count = try probe.partitionCount(topic: topic, timeout: metadataTimeout)
        } catch {
            throw SinkError(
                .kafkaFailed,
                "could not read the partitions of \(topic) from \(servers) within \(metadataTimeout): \(error)")
        }
        guard count > 0 else {
            throw SinkError(.kafkaFailed, "the topic \(topic) does not exist on \(servers)")
        }
        var start: [Partition] = []
        for partition in 0..<count {
            let marks: (low: Int64, high: Int64)
            do {
                marks = try probe.watermarks(topic: topic, partition: partition, timeout: metadataTimeout)
            } catch {
                throw SinkError(
                    .kafkaFailed,
                    "could not read the offsets of \(topic) partition \(partition) from \(servers): \(error)")
            }
            let stored = try store.position(topic: topic, partition: partition).nextOffset
            start.append(
                Partition(partition: partition, low: marks.low, end: marks.high, position: max(stored ?? 0, marks.low)))
        }
        self.start = start
        sink = try RollupSink(configuration: configuration, store: store, log: log)
    }

    /// Where the rebuild stands now, read from the store's positions.
    public func progress(since began: ContinuousClock.Instant) throws -> Progress {
        let topic = configuration.batchesTopic
        let partitions = try start.map { partition in
            var partition = partition
            let stored = try store.position(topic: topic, partition: partition.partition).nextOffset
            partition.position = max(stored ?? 0, partition.low)
            return partition
        }
        return Progress(partitions: partitions, counters: sink.counters, elapsed: .now - began)
    }

    /// Runs the sink until every partition reached its end offset, then lets it read what is left of the deploys
    /// and manifests topics (up to `drain`), and stops it. Calls `progress` about every `interval` from the calling
    /// thread, and once at the end; returns the final progress.
    public func run(
        every interval: Duration = .seconds(2), drain: Duration = .seconds(30),
        progress report: (Progress) -> Void = { _ in }
    ) throws -> Progress {
        let began = ContinuousClock.now
        sink.start()
        var last = ContinuousClock.now
        var current = try progress(since: began)
        let pause = Wakeup()
        while !current.isDone {
            pause.wait(for: .milliseconds(100))
            current = try progress(since: began)
            if ContinuousClock.now - last >= interval {
                report(current)
                last = .now
            }
        }
        sink.stop(draining: drain)
        current = try progress(since: began)
        report(current)
        return current
    }
}
