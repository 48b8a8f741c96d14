public import FlowmeterModels
public import FlowmeterWire
import Synchronization

/// The sink's rollup builder: the batches of one step are recorded, then drained as the minute rollups the step
/// merges into the store.
///
/// Thread-safe and cheap: each `record` call takes one lock out of ``Configuration/shardCount`` (picked by the
/// batch's app build) for the whole batch, and hashes only the event's kind, widget type and minute per event.
///
/// Bounded memory: each shard holds at most `maxEntries / shardCount` series or version entries (one per series or
/// app build per minute) before it overflows. In overflow, an event whose series is not yet held counts into the
/// series of its app build and kind with widget type `__other__` (and a batch of an app build not yet held into the
/// app's `__other__` platform and version); at twice the cap the shard takes nothing new and the events are only
/// counted in ``droppedEvents``. So at most `2 × maxEntries` entries live between drains; an entry is a few hundred
/// bytes plus its HyperLogLog (at most 2 KB sparse, 4 KB dense once a series-minute has over 512 installs).
public final class RollupAggregator: Sendable {
    /// How an aggregator is named and bounded.
    public struct Configuration: Sendable {
        /// The collector id, carried in every partial rollup's `collector`.
        public var collectorID: String
        /// A random id for this process's life, so a restarted collector never reuses a message id; default 16
        /// random hex digits.
        public var bootID: String
        /// Independent locks; default 16.
        public var shardCount: Int
        /// The entries (series-minutes plus app-build-minutes) held between drains before overflow; default 20,000.
        public var maxEntries: Int

        /// Creates a configuration with the documented defaults.
        public init(collectorID: String, bootID: String? = nil, shardCount: Int = 16, maxEntries: Int = 20_000) {
            self.collectorID = collectorID
            self.bootID = bootID ?? Self.randomBootID()
            self.shardCount = max(1, shardCount)
            self.maxEntries = max(self.shardCount, maxEntries)
        }

        static func randomBootID() -> String {
            let value = UInt64.random(in: .min ... .max)
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    /// The widget type (and, for app builds, platform and version) that overflowing events are counted under.
    public static let overflowLabel = "__other__"

    /// The configuration it was made with.
    public let configuration: Configuration
    /// `<collectorID>-<bootID>`, the first part of every message id.
    public let instance: String

    private let shards: [AggregatorShard]
    private let nextSequence = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    /// Creates an empty aggregator.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.instance = "\(configuration.collectorID)-\(configuration.bootID)"
        let cap = configuration.maxEntries / configuration.shardCount
        self.shards = (0..<configuration.shardCount).map { _ in AggregatorShard(softCap: cap) }
    }

    /// Events (by `count`) that found every shard full and were counted nowhere but here, since the start.
    public var droppedEvents: Int {
        dropped.load(ordering: .relaxed)
    }

    /// The entries (series-minutes plus app-build-minutes) held now, over every shard: what a drain would return,
    /// about.
    public var entryCount: Int {
        shards.reduce(0) { total, shard in total + shard.state.withLock { $0.entryCount } }
    }

    /// Records one accepted batch: its accepted events into series rollups, the batch into its app build's version
    /// rollup.
    ///
    /// - Parameters:
    ///   - events: the accepted events, `occurredAt` as the app sent it.
    ///   - client: the batch's client information.
    ///   - decodes: the batch's `decodes`.
    ///   - installHash: the salted install pseudonym, nil when the app sent no install id.
    ///   - receivedAt: when the collector received the batch; its minute is the version rollup's window.
    ///   - clockSkew: added to every `occurredAt` (the collector's `receivedAt - sentAt`); the sum picks the minute.
    ///   - droppedEvents: events of the batch that were dropped (undecodable, too old, too far ahead); a batch is
    ///     clean when it has no accepted and no dropped event.
    ///   - clientDiscarded: events the app's SDK reported dropping before sending (its `clientReport` total).
    ///   - counters: where every event's `count` is also added (by app, build, kind and widget type), whether or not
    ///     the aggregator had room for it; nil for none.
    ///   - isContinuation: a later part of a split batch: its events and install count, but not the batch (its
    ///     batch count, decodes and client report went with part 0).
    public func record(
        _ events: [DiagnosticEvent], client: ClientInfo, decodes: Int?, installHash: String?, receivedAt: Timestamp,
        clockSkew: Duration = .zero, droppedEvents: Int = 0, clientDiscarded: Int = 0,
        counters: (any SeriesCounterSource)? = nil, isContinuation: Bool = false
    ) {
        record(
            EventTable(events), client: client, decodes: decodes, installHash: installHash,
            receivedAt: receivedAt, clockSkew: clockSkew, droppedEvents: droppedEvents,
            clientDiscarded: clientDiscarded, counters: counters, isContinuation: isContinuation)
    }

    /// Records one accepted batch as ``record(_:client:decodes:installHash:receivedAt:clockSkew:droppedEvents:clientDiscarded:counters:)``
    /// does, its events an ``EventTable`` (the collector's decoded batches).
    public func record(
        _ events: EventTable, client: ClientInfo, decodes: Int?, installHash: String?,
        receivedAt: Timestamp, clockSkew: Duration = .zero, droppedEvents: Int = 0, clientDiscarded: Int = 0,
        counters: (any SeriesCounterSource)? = nil, isContinuation: Bool = false
    ) {
        var batch = AggregatorShard.Batch(
            version: VersionKey(client: client), capabilities: client.capabilities, decodes: decodes ?? 0,
            install: installHash.map(HyperLogLog.hash(installHash:)), receivedAt: receivedAt,
            skew: SkewShift(clockSkew), isClean: events.isEmpty && droppedEvents == 0,
            clientDiscarded: clientDiscarded, build: client.build, counters: counters)
        batch.isContinuation = isContinuation
        // By app build, so each series lives in one shard: round-robin spreads locks evenly but holds a hot series
        // once per shard, multiplying memory and the work of every drain.
        let shard = shards[Int(UInt(bitPattern: batch.version.hashValue) % UInt(shards.count))]
        let lost = shard.state.withLock { $0.record(events, batch: batch) }
        if lost > 0 { dropped.add(lost, ordering: .relaxed) }
    }

    /// Takes everything recorded since the previous drain as partial rollups, ids `<instance>/<sequence>/<index>`,
    /// series first, each group ordered by window then key; empty when nothing was recorded.
    ///
    /// Concurrent `record` calls are never lost: each lands wholly in this drain or the next.
    public func drain() -> [PartialRollup] {
        // A series lives in the shard of its app build, so only the overflow builds (`__other__`), which any shard
        // may hold, can meet another shard's rollup of the same series and window; the rest are appended as taken.
        var series: [SeriesRollup] = []
        var overflowSeries: [SeriesRollupKey: SeriesRollup] = [:]
        var versions: [VersionRollupKey: VersionRollup] = [:]
        // Each rollup is moved, never copied, from its accumulator to its partial: a copy retains its strings,
        // sketch and dictionaries, which for 10,000 series a drain was a tenth of the time the drain took.
        for shard in shards {
            var taken: [VersionKey: AggregatorShard.VersionEntry]
            let names: SampleNames
            (taken, names) = shard.state.withLock { $0.take() }
            var index = taken.startIndex
            while index != taken.endIndex {
                for rollup in taken.values[index].windows.values {
                    let key = VersionRollupKey(key: rollup.key, window: rollup.window)
                    if versions[key] != nil { versions[key]!.merge(rollup) } else { versions[key] = rollup }
                }
                let version = taken.keys[index]
                let mayMeet = version.platform == Self.overflowLabel && version.appVersion == Self.overflowLabel
                while let accumulator = taken.values[index].accumulators.popLast() {
                    let rollup = accumulator.finishedRollup(names: names, version: version)
                    guard mayMeet else {
                        series.append(rollup)
                        continue
                    }
                    let key = SeriesRollupKey(series: rollup.series, window: rollup.window)
                    if overflowSeries[key] != nil {
                        overflowSeries[key]!.merge(rollup)
                    } else {
                        overflowSeries[key] = rollup
                    }
                }
                taken.formIndex(after: &index)
            }
        }
        series.append(contentsOf: overflowSeries.values)
        guard !series.isEmpty || !versions.isEmpty else { return [] }
        let sequence = nextSequence.wrappingAdd(1, ordering: .relaxed).oldValue
        let prefix = "\(instance)/\(sequence)/"
        var partials: [PartialRollup] = []
        partials.reserveCapacity(series.count + versions.count)
        // Last first, so each is moved out from the end.
        Self.sortByWindowAndSeries(&series, descending: true)
        while let rollup = series.popLast() {
            partials.append(
                PartialRollup(
                    id: prefix + String(partials.count), collector: configuration.collectorID,
                    rollup: .series(rollup)))
        }
        let sortedVersions = versions.values.sorted { $0.window != $1.window ? $0.window < $1.window : $0.key < $1.key }
        for rollup in sortedVersions {
            partials.append(
                PartialRollup(
                    id: prefix + String(partials.count), collector: configuration.collectorID,
                    rollup: .version(rollup)))
        }
        return partials
    }

    /// Orders `rollups` by window, then series (``RollupSeries``' order), as sorting them with that comparison
    /// would (reversed when `descending`), but comparing integers and moving each rollup once: each distinct app
    /// build, kind and widget type is ranked once, the positions are sorted by (window, ranks), and the rollups are
    /// put in place by swaps. Sorting the rollups themselves compared four to six strings per comparison and was the
    /// larger part of a drain of 10,000 series; hashing each series' strings into rank tables, and copying each
    /// rollup to read them, was most of what was left. Rollups come grouped by app build (one shard's entry after
    /// another), so a rollup whose build, kind or type is its predecessor's reuses its id without a lookup.
    static func sortByWindowAndSeries(_ rollups: inout [SeriesRollup], descending: Bool = false) {
        guard rollups.count > 1 else { return }
        var versions = DistinctValues<VersionKey>()
        var kinds = DistinctValues<String>()
        var types = DistinctValues<String>()
        var ids: [(version: Int, kind: Int, type: Int)] = []
        ids.reserveCapacity(rollups.count)
        rollups.withUnsafeBufferPointer { rollups in
            for position in rollups.indices {
                let series = rollups[position].series
                guard position > 0 else {
                    ids.append(
                        (versions.id(series.versionKey), kinds.id(series.kind.rawValue), types.id(series.widgetType)))
                    continue
                }
                let previous = rollups[position - 1].series
                let last = ids[position - 1]
                let version =
                    series.appID == previous.appID && series.appVersion == previous.appVersion
                        && series.platform == previous.platform
                        && series.buildConfiguration == previous.buildConfiguration
                    ? last.version : versions.id(series.versionKey)
                let kind = series.kind == previous.kind ? last.kind : kinds.id(series.kind.rawValue)
                let type = series.widgetType == previous.widgetType ? last.type : types.id(series.widgetType)
                ids.append((version, kind, type))
            }
        }
        let versionRanks = versions.ranks(by: <)
        let kindRanks = kinds.ranks(by: utf8Less)
        let typeRanks = types.ranks(by: utf8Less)
        // Ranks are below the number of rollups, far below 2^21 (the aggregator holds at most twice its soft cap).
        var keys: [(window: Int64, ranks: UInt64, position: Int)] = []
        keys.reserveCapacity(rollups.count)
        for position in rollups.indices {
            let id = ids[position]
            let ranks =
                UInt64(versionRanks[id.version]) << 42 | UInt64(kindRanks[id.kind]) << 21 | UInt64(typeRanks[id.type])
            keys.append((rollups[position].window.start, ranks, position))
        }
        keys.sort { ($0.window, $0.ranks) < ($1.window, $1.ranks) }
        var order = keys.map(\.position)
        if descending { order.reverse() }
        permute(&rollups, by: &order)
    }

    /// The distinct values seen, each with an id in the order first seen; ranked by an order afterwards.
    private struct DistinctValues<Value: Hashable> {
        var ids: [Value: Int] = [:]
        var values: [Value] = []

        mutating func id(_ value: Value) -> Int {
            if let id = ids[value] { return id }
            ids[value] = values.count
            values.append(value)
            return values.count - 1
        }

        /// Each id's rank among the values ordered by `less`.
        func ranks(by less: (Value, Value) -> Bool) -> [Int] {
            var ranks = [Int](repeating: 0, count: values.count)
            for (rank, id) in values.indices.sorted(by: { less(values[$0], values[$1]) }).enumerated() {
                ranks[id] = rank
            }
            return ranks
        }
    }

    /// Rearranges `elements` so that position `p` holds what was at `order[p]`, by swaps along each cycle of the
    /// permutation (a swap moves, where building a new array would copy every element); `order` is used up.
    static func permute<Element>(_ elements: inout [Element], by order: inout [Int]) {
        precondition(order.count == elements.count, "one source index per position")
        // Swapped in the buffer, where a swap moves the two elements; the array's own `swapAt` copied each (a
        // retain and a release of every reference a rollup holds).
        elements.withUnsafeMutableBufferPointer { elements in
            for start in order.indices where order[start] != start {
                var position = start
                while true {
                    let source = order[position]
                    order[position] = position
                    if source == start { break }
                    elements.swapAt(position, source)
                    position = source
                }
            }
        }
    }

    private struct SeriesRollupKey: Hashable {
        var series: RollupSeries
        var window: MinuteWindow
    }

    private struct VersionRollupKey: Hashable {
        var key: VersionKey
        var window: MinuteWindow
    }
}

/// A clock-skew shift split into seconds and nanoseconds, so far-future times cannot overflow a nanosecond count.
struct SkewShift: Sendable {
    var seconds: Int64
    var nanoseconds: Int64

    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.seconds = seconds
        self.nanoseconds = attoseconds / 1_000_000_000
    }

    var isZero: Bool { seconds == 0 && nanoseconds == 0 }

    func apply(to instant: Timestamp) -> Timestamp {
        if isZero { return instant }
        var seconds = instant.secondsSinceEpoch &+ self.seconds
        var nanos = Int64(instant.nanoseconds) + nanoseconds
        if nanos < 0 {
            nanos += 1_000_000_000
            seconds &-= 1
        } else if nanos >= 1_000_000_000 {
            nanos -= 1_000_000_000
            seconds &+= 1
        }
        return Timestamp(secondsSinceEpoch: seconds, nanoseconds: Int32(nanos))
    }
}
