public import FlowmeterModels

/// A store's freshness judged at one instant: how far the store has counted each log it is built from (the
/// partitions of the batches topic, one watermark per partition written by the sink with each step), which it is
/// current with, which it lags behind, and up to when its data is complete.
///
/// Each source is named by its watermarks' ``CollectorWatermark/collector``: the topic for the sink's partitions
/// (`flowmeter.batches.v1`), a collector's id for watermarks an older store still holds. A source is complete up to
/// the oldest of its partitions' watermarks (unknown until every partition has one). It is `stopped` when every
/// partition holds a shutdown watermark (only older collectors sent those), `gone` when its newest watermark is more
/// than `goneAfter` older than the newest of any source (it will not catch up), `behind` when it is complete up to
/// more than `behindAfter` before now (or not yet on every partition), else `current`. The store is complete up to
/// the oldest point of its current and behind sources (the newest stop when every source stopped): every record
/// appended to their partitions before then is counted in it.
public struct FreshnessAssessment: Sendable, Hashable {
    /// Where a collector stands.
    public enum Status: String, Sendable, Hashable {
        /// Complete up to within `behindAfter` of now.
        case current
        /// Complete only up to longer ago, or not yet on every partition.
        case behind
        /// Stopped cleanly: everything it received is in the store.
        case stopped
        /// Not heard from for `goneAfter` while others were; left out of completeness.
        case gone
    }

    /// One collector's standing.
    public struct Collector: Sendable, Hashable {
        /// The collector id.
        public var name: String
        /// Where it stands.
        public var status: Status
        /// The oldest watermark over the topic's partitions; nil while some partition has none.
        public var completeUpTo: Timestamp?
        /// Its newest watermark on any partition.
        public var lastHeard: Timestamp
        /// Seconds from `completeUpTo` to now (never negative); nil with `completeUpTo`.
        public var lagSeconds: Int64?
        /// The topic's partitions, as its newest watermark counts them.
        public var partitions: Int
        /// How many of them hold a watermark of it.
        public var partitionsReported: Int
        /// How many of them are behind: no watermark yet, or one more than `behindAfter` before now.
        public var partitionsBehind: Int
    }

    /// The instant it was judged at.
    public var now: Timestamp
    /// Every collector with a watermark, ordered by name.
    public var collectors: [Collector]
    /// Every event the live collectors had received before this is in the store; nil when no collector is complete
    /// on every partition (or none sent a watermark: older collectors, or an empty store).
    public var completeUpTo: Timestamp?
    /// What retention removed.
    public var retention: RetentionHorizon
    /// The lag beyond which a collector is behind.
    public var behindAfter: Int64

    /// Judges `freshness` at `now`.
    ///
    /// - Parameters:
    ///   - behindAfter: seconds of lag beyond which a collector is behind; default 120 (collectors flush every few
    ///     seconds, and their watermark trails by up to two flushes).
    ///   - goneAfter: seconds a collector's newest watermark may trail the newest of all before it is gone; default
    ///     900.
    public init(_ freshness: StoreFreshness, now: Timestamp, behindAfter: Int64 = 120, goneAfter: Int64 = 900) {
        self.now = now
        self.retention = freshness.retention
        self.behindAfter = behindAfter
        var byCollector: [String: [CollectorWatermark]] = [:]
        for watermark in freshness.watermarks { byCollector[watermark.collector, default: []].append(watermark) }
        let newest = freshness.watermarks.map(\.completeUpTo).max()
        var collectors: [Collector] = []
        for (name, watermarks) in byCollector {
            let latest = watermarks.max { $0.completeUpTo < $1.completeUpTo }!
            let partitions = latest.partitions
            let current = watermarks.filter { $0.partition < partitions }
            let reported = Set(current.map(\.partition)).count
            let complete = reported == partitions ? current.map(\.completeUpTo).min() : nil
            let lag = complete.map { max(0, now.secondsSinceEpoch - $0.secondsSinceEpoch) }
            let lagging = Set(
                current.filter { now.secondsSinceEpoch - $0.completeUpTo.secondsSinceEpoch > behindAfter }.map(
                    \.partition))
            let status: Status
            if reported == partitions && current.allSatisfy(\.isStopped) {
                status = .stopped
            } else if let newest, newest.secondsSinceEpoch - latest.completeUpTo.secondsSinceEpoch > goneAfter {
                status = .gone
            } else if let lag, lag <= behindAfter {
                status = .current
            } else {
                status = .behind
            }
            collectors.append(
                Collector(
                    name: name, status: status, completeUpTo: complete, lastHeard: latest.completeUpTo,
                    lagSeconds: lag, partitions: partitions, partitionsReported: reported,
                    partitionsBehind: partitions - reported + lagging.count))
        }
        self.collectors = collectors.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        let live = self.collectors.filter { $0.status == .current || $0.status == .behind }
        if live.isEmpty {
            completeUpTo = self.collectors.filter { $0.status == .stopped }.compactMap(\.completeUpTo).max()
        } else {
            completeUpTo = live.compactMap(\.completeUpTo).min()
        }
    }

    /// Whether no collector has sent a watermark the store recorded.
    public var isUnknown: Bool { collectors.isEmpty }

    /// The collectors the store lags behind.
    public var behind: [Collector] { collectors.filter { $0.status == .behind } }

    /// The live collectors whose data may be missing from a window that ends at `to`: those behind whose
    /// `completeUpTo` is before `to` (or unknown).
    public func incompleteCollectors(endingAt to: Timestamp) -> [Collector] {
        behind.filter { collector in collector.completeUpTo.map { $0 < to } ?? true }
    }

    /// Whether a window ending at `to` holds everything the live collectors received for it (as far as the
    /// watermarks tell: true when there are none).
    public func isComplete(endingAt to: Timestamp) -> Bool {
        incompleteCollectors(endingAt: to).isEmpty
    }
}
