import FlowmeterModels
import FlowmeterWire
import Metrics
import Synchronization

/// One lock's worth of a ``RollupAggregator``: the rollups recorded since the last drain, grouped by app build.
final class AggregatorShard: Sendable {
    let state: Mutex<State>

    init(softCap: Int) {
        state = Mutex(State(softCap: softCap))
    }

    /// What one `record` call carries besides its events.
    struct Batch {
        var version: VersionKey
        var capabilities: Capabilities?
        var decodes: Int
        var install: UInt64?
        var receivedAt: Timestamp
        var skew: SkewShift
        var isClean: Bool
        var clientDiscarded = 0
        /// The batch's `client.build`, nil when it sent none.
        var build: String?
        var counters: (any SeriesCounterSource)?
        /// A later part of a split batch: its events and install count, the batch itself was counted with part 0.
        var isContinuation = false

        /// Adds `event`'s count to its counter, asked for alone (an event kept in no series of its own); nothing
        /// without `counters`.
        func countAlone(_ event: CompactEvent, table: EventTable) {
            guard let counters else { return }
            counters.counter(
                appID: version.appID, build: version.buildConfiguration, kind: table.kind(of: event),
                widgetType: table.string(event.widgetType)
            ).increment(by: UInt64(max(0, event.count)))
        }
    }

    /// A series within an app build: the per-event hash key, made of the digests of its kind and widget type (their
    /// `hashValue`s, from the shard's ``StringDigestCache``), its window, and a probe number.
    ///
    /// It holds no strings, so making and comparing one copies and reads none: the series' own kind and widget type
    /// are checked on the accumulator a lookup finds, in the cache line its counts share. Two series whose digests
    /// both collide (SipHash under the process's random seed: not to be expected, nor to be forced) get probe 0
    /// and 1, and so on; every lookup walks the probes until the series matches or a probe is free.
    struct SeriesSlot: Hashable {
        var kindDigest: Int
        var typeDigest: Int
        var window: Int64
        var probe = 0

        /// What `Dictionary` hashes a slot by: the two digests are already SipHash outputs under the process's
        /// random seed, so a multiply-xorshift mix of them, the window and the table's seed spreads slots as well
        /// as running SipHash over them again (which cost about 320 instructions per event: a `Hasher`, three
        /// combines and a finalize) and stays as hard to flood, since the digests cannot be predicted.
        func _rawHashValue(seed: Int) -> Int {
            var mixed = UInt64(bitPattern: Int64(seed)) ^ UInt64(bitPattern: Int64(kindDigest))
            mixed = (mixed ^ (mixed >> 29)) &* 0xBF58_476D_1CE4_E5B9
            mixed ^= UInt64(bitPattern: Int64(typeDigest)) &+ UInt64(bitPattern: Int64(probe))
            mixed = (mixed ^ (mixed >> 32)) &* 0x94D0_49BB_1331_11EB
            mixed ^= UInt64(bitPattern: window)
            mixed = (mixed ^ (mixed >> 29)) &* 0xBF58_476D_1CE4_E5B9
            return Int(bitPattern: UInt(mixed ^ (mixed >> 32)))
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(kindDigest)
            hasher.combine(typeDigest)
            hasher.combine(window)
            hasher.combine(probe)
        }
    }

    /// A series rollup being built, with what lets repeated events skip work.
    ///
    /// Laid out hot first: Swift places a struct's stored properties in declaration order, so what every event reads
    /// or writes (the series' identity, its counts and times, the last install, sample and release, the counter)
    /// shares the accumulator's first two cache lines; samples and releases follow, touched only when an event
    /// brings a new one. The app build is not kept: the drain knows it (``finishedRollup(names:version:)``). As one
    /// ``SeriesRollup`` it spread over five lines, every event missing on three or four of them once the series of a
    /// busy minute outgrew the cache.
    struct SeriesAccumulator {
        /// The series' widget type (`""` for none) and kind, which a lookup checks: its slot's digests may collide
        /// with another series'.
        let widgetType: String
        let kind: DiagnosticKind
        var events: Int64 = 0
        var firstSeen: Timestamp
        var lastSeen: Timestamp
        var lastInstall: UInt64?
        /// The last event's sample, which consecutive events usually repeat.
        var lastSample = SampleKey.none
        var counterTypeIsNil = false
        /// The batch's ``SeriesCounterSource`` counter for this series' own widget type, and whether that type is
        /// nil (the series of "" holds both). Events of other types (the overflow series holds many) are counted
        /// alone; a series made for the overflow has none.
        var counter: Counter?
        var installs = HyperLogLog()
        /// The release of the last event that had one, and where its count sits in ``releases`` (nil until it is
        /// looked up; valid until a release is added: only value updates happen in between).
        var lastRelease: String?
        var lastReleaseIndex: Dictionary<String, Int64>.Index?
        /// Events of `lastRelease` not yet added to its count in ``releases``: kept here while the release repeats,
        /// so those events do not touch the dictionary's storage (a cache miss per event); added before any other
        /// release is counted, so ``releases`` is as it would be at every insertion and bound, and at the drain.
        var pendingReleaseCount: Int64 = 0
        /// The samples, as ids in the shard's ``SampleNames``.
        var samples = SampleKeys()
        var releases: [String: Int64] = [:]
        let window: MinuteWindow

        init(kind: DiagnosticKind, widgetType: String, window: MinuteWindow, at occurredAt: Timestamp) {
            self.kind = kind
            self.widgetType = widgetType
            self.window = window
            firstSeen = occurredAt
            lastSeen = occurredAt
        }

        /// Whether this is the series of `kind` and `widgetType` (its slot's digests may collide with another's).
        @inline(__always)
        func isSeries(kind: String, widgetType: String) -> Bool {
            self.widgetType == widgetType && self.kind.rawValue == kind
        }

        /// The series rollup of app build `version`, with its samples, their ids read in `names` (the shard's table
        /// they were taken in). Consuming, so a drain moves the sketch and releases out instead of copying them.
        consuming func finishedRollup(names: SampleNames, version: VersionKey) -> SeriesRollup {
            settlePendingRelease()
            return SeriesRollup(
                series: RollupSeries(version: version, kind: kind, widgetType: widgetType), window: window,
                events: events, installs: installs, firstSeen: firstSeen, lastSeen: lastSeen, releases: releases,
                samples: samples.samples(names: names))
        }
    }

    /// One app build's rollups.
    struct VersionEntry {
        var windows: [MinuteWindow: VersionRollup] = [:]
        /// Where each series' accumulator is in ``accumulators``.
        var series: [SeriesSlot: Int] = [:]
        /// The series' accumulators, in the order they were made: in an array, so a drain moves them out one by one
        /// (`popLast`) where a dictionary's values would be copied.
        var accumulators: [SeriesAccumulator] = []
        var lastRegisteredTypes: [String]?
        var lastTypesWindow: MinuteWindow?
    }

    struct State: ~Copyable {
        let softCap: Int
        var versions: [VersionKey: VersionEntry] = [:]
        var entryCount = 0
        /// Kinds' and widget types' digests for ``SeriesSlot``; kept across drains (it holds strings, no counts).
        var digests = StringDigestCache()
        /// The digests of the recording batch's table entries (0 for one not asked for yet); kept so a batch
        /// allocates no array of its own.
        var entryDigests: [Int] = []
        /// The samples' strings and the recording batch's sample ids.
        var samples: BatchSamples

        init(softCap: Int) {
            self.softCap = softCap
            samples = BatchSamples(names: SampleNames(capacity: Self.sampleNameCapacity(softCap: softCap)))
        }

        /// Distinct sample strings a shard holds between drains: 16 per series of its soft cap, about the nine
        /// strings that three samples name for each of the up to twice as many series it may hold; a flood of
        /// distinct messages past that goes unsampled until the next drain.
        static func sampleNameCapacity(softCap: Int) -> Int {
            max(1_024, 16 * softCap)
        }

        /// Everything recorded and the sample strings it names, leaving the shard empty.
        mutating func take() -> (versions: [VersionKey: VersionEntry], sampleNames: SampleNames) {
            entryCount = 0
            let taken = versions
            versions = [:]
            let names = samples.names
            samples.names = SampleNames(capacity: names.capacity)
            return (taken, names)
        }

        /// Records a batch; returns the events (by count) it had no room for.
        mutating func record(_ table: EventTable, batch: Batch) -> Int {
            let events = table.events
            var key = batch.version
            if versions[key] == nil {
                if entryCount >= softCap {
                    key.platform = RollupAggregator.overflowLabel
                    key.appVersion = RollupAggregator.overflowLabel
                }
                if versions[key] == nil {
                    guard entryCount < 2 * softCap else {
                        for position in events.indices { batch.countAlone(events[position], table: table) }
                        return events.reduce(0) { $0.addingReportingOverflow($1.count).overflow ? .max : $0 + $1.count }
                    }
                    versions[key] = VersionEntry()
                }
            }
            let softCap = self.softCap
            var count = entryCount
            // Mutating through `values[index]` stays in place; `versions[key]!` may copy the entry and with it
            // every nested dictionary and sketch.
            let index = versions.index(forKey: key)!
            samples.begin(tableCount: table.strings.count)
            let lost = versions.values[index].record(
                table, batch: batch, version: key, entryCount: &count, softCap: softCap, digests: &digests,
                entryDigests: &entryDigests, samples: &samples)
            entryCount = count
            return lost
        }
    }
}

extension AggregatorShard.VersionEntry {
    mutating func record(
        _ table: EventTable, batch: AggregatorShard.Batch, version: VersionKey, entryCount: inout Int,
        softCap: Int, digests: inout StringDigestCache, entryDigests: inout [Int], samples: inout BatchSamples
    ) -> Int {
        let events = table.events
        let strings = table.strings
        recordBatch(
            batch, version: version, releases: Self.attributedReleases(table, batch: batch), entryCount: &entryCount,
            softCap: softCap)
        let isCounting = batch.counters != nil
        var lost = 0
        // Each table entry's digest once per batch, however many events name it.
        entryDigests.removeAll(keepingCapacity: true)
        entryDigests.append(contentsOf: repeatElement(0, count: strings.count))
        var emptyDigest: Int?
        // The table's strings are read in place: each value an event names is copied (retained) only where it is
        // kept, in a new series or a new sample, not once per field per event.
        strings.withUnsafeBufferPointer { strings in
            for position in events.indices {
                let event = events[position]
                let occurredAt = batch.skew.apply(to: event.occurredAt)
                let window = MinuteWindow(containing: occurredAt)
                let kind = strings[Int(event.kind)]
                let widgetType = event.widgetType < 0 ? "" : strings[Int(event.widgetType)]
                let kindDigest = Self.digest(event.kind, of: kind, entries: &entryDigests, digests: &digests)
                let typeDigest: Int
                if event.widgetType < 0 {
                    if emptyDigest == nil { emptyDigest = digests.digest("") }
                    typeDigest = emptyDigest!
                } else {
                    typeDigest = Self.digest(
                        event.widgetType, of: widgetType, entries: &entryDigests, digests: &digests)
                }
                var slot = AggregatorShard.SeriesSlot(
                    kindDigest: kindDigest, typeDigest: typeDigest, window: window.start)
                var index = find(&slot, kind: kind, widgetType: widgetType)
                // Whether the event went to the overflow series instead of its own: its type is not the series'.
                var isRedirected = false
                if index == nil {
                    if entryCount >= softCap {
                        slot = AggregatorShard.SeriesSlot(
                            kindDigest: kindDigest, typeDigest: digests.digest(RollupAggregator.overflowLabel),
                            window: window.start)
                        isRedirected = true
                        index = find(&slot, kind: kind, widgetType: RollupAggregator.overflowLabel)
                    }
                    if index == nil {
                        guard entryCount < 2 * softCap else {
                            lost = lost.addingReportingOverflow(event.count).overflow ? .max : lost + event.count
                            batch.countAlone(event, table: table)
                            continue
                        }
                        entryCount += 1
                        let seriesKind = table.kind(of: event)
                        var accumulator = AggregatorShard.SeriesAccumulator(
                            kind: seriesKind, widgetType: isRedirected ? RollupAggregator.overflowLabel : widgetType,
                            window: window, at: occurredAt)
                        if let counters = batch.counters, !isRedirected {
                            accumulator.counterTypeIsNil = event.widgetType < 0
                            accumulator.counter = counters.counter(
                                appID: batch.version.appID, build: batch.version.buildConfiguration, kind: seriesKind,
                                widgetType: event.widgetType < 0 ? nil : widgetType)
                        }
                        index = add(accumulator, at: slot)
                    }
                }
                let sample = samples.key(of: event, strings: strings)
                let counted = accumulators[index!].add(
                    event, strings: strings, occurredAt: occurredAt, install: batch.install, isOwnType: !isRedirected,
                    sample: sample, names: samples.names)
                if !counted && isCounting { batch.countAlone(event, table: table) }
            }
        }
        return lost
    }

    /// The series at `slot` that is the one of `kind` and `widgetType`; nil when none is, with `slot`'s probe set to
    /// the first free one.
    @inline(__always)
    private func find(_ slot: inout AggregatorShard.SeriesSlot, kind: String, widgetType: String) -> Int? {
        while let index = series[slot] {
            if accumulators[index].isSeries(kind: kind, widgetType: widgetType) { return index }
            slot.probe += 1
        }
        return nil
    }

    /// Holds `accumulator` as the series at `slot` (a free probe); returns its index in ``accumulators``.
    mutating func add(_ accumulator: consuming AggregatorShard.SeriesAccumulator, at slot: AggregatorShard.SeriesSlot)
        -> Int
    {
        let index = accumulators.count
        accumulators.append(accumulator)
        series[slot] = index
        return index
    }

    /// The digest of table entry `index` (`string`), remembered in `entries` for the rest of the batch (0 there
    /// means not yet: a digest that is 0 is only looked up again).
    @inline(__always)
    private static func digest(
        _ index: Int32, of string: String, entries: inout [Int], digests: inout StringDigestCache
    ) -> Int {
        let remembered = entries[Int(index)]
        if remembered != 0 { return remembered }
        let digest = digests.digest(string)
        entries[Int(index)] = digest
        return digest
    }

    /// The releases the batch's decodes are attributed to (``VersionReleaseTraffic/attributed(_:)``): none for a
    /// later part of a split batch (the first part counted the batch) or a batch without a release on its events.
    static func attributedReleases(_ table: EventTable, batch: AggregatorShard.Batch) -> [String] {
        guard !batch.isContinuation, !batch.isClean else { return [] }
        let events = table.events
        // Most batches carry one release or none: found without building a list.
        var only: Int32 = CompactEvent.absent
        var isSingle = true
        for position in events.indices {
            let release = events[position].backendRelease
            guard release >= 0, release != only else { continue }
            if only < 0 {
                only = release
            } else {
                isSingle = false
                break
            }
        }
        guard only >= 0 else { return [] }
        if isSingle { return [table.strings[Int(only)]] }
        // Events per release, by table entry (a batch names a few releases): no string is touched per event.
        var totals: [(release: Int32, events: Int64)] = []
        for position in events.indices where events[position].backendRelease >= 0 {
            let event = events[position]
            let count = Int64(max(0, event.count))
            if let at = totals.firstIndex(where: { $0.release == event.backendRelease }) {
                totals[at].events = totals[at].events.saturatingAdding(count)
            } else {
                totals.append((event.backendRelease, count))
            }
        }
        return VersionReleaseTraffic.attributed(totals.map { (table.strings[Int($0.release)], $0.events) })
    }

    private mutating func recordBatch(
        _ batch: AggregatorShard.Batch, version: VersionKey, releases: [String], entryCount: inout Int, softCap: Int
    ) {
        let window = MinuteWindow(containing: batch.receivedAt)
        var index = windows.index(forKey: window)
        if index == nil {
            // A version's window is the minute of receipt, so a held version gains at most one entry a minute.
            entryCount += 1
            windows[window] = VersionRollup(key: version, window: window)
            index = windows.index(forKey: window)
        }
        let types = batch.capabilities?.registeredTypes
        let repeats = types != nil && window == lastTypesWindow && types == lastRegisteredTypes
        windows.values[index!].add(batch, repeatsTypes: repeats)
        if !releases.isEmpty {
            windows.values[index!].attribute(decodes: Int64(max(0, batch.decodes)), to: releases)
        }
        if let types {
            lastRegisteredTypes = types
            lastTypesWindow = window
        }
    }
}

extension VersionRollup {
    fileprivate mutating func add(_ batch: AggregatorShard.Batch, repeatsTypes: Bool) {
        if !batch.isContinuation {
            batches += 1
            if batch.isClean { cleanBatches += 1 }
            decodes = decodes.saturatingAdding(Int64(max(0, batch.decodes)))
            clientDiscarded = clientDiscarded.saturatingAdding(Int64(max(0, batch.clientDiscarded)))
        }
        if !batch.isContinuation, let build = batch.build { count(build: build) }
        if let install = batch.install { installs.insert(hash: install) }
        if let capabilities = batch.capabilities {
            // Installs of one build send the same list over and over; skip the set work when it repeats.
            if let types = capabilities.registeredTypes, !repeatsTypes {
                registeredTypes.formUnion(types)
            }
            maxSchemaVersion = Self.maxOptional(maxSchemaVersion, capabilities.maxSchemaVersion)
        }
    }
}

extension AggregatorShard.SeriesAccumulator {
    /// Adds the event at `position`; returns whether its count also went to the series' counter (false without
    /// one, or for an event of another widget type than the counter's). `isOwnType` says the event's type is the
    /// series' own (or nil for the series of ""), not redirected to the overflow series.
    mutating func add(
        _ event: CompactEvent, strings: UnsafeBufferPointer<String>, occurredAt: Timestamp, install: UInt64?,
        isOwnType: Bool, sample: SampleKey?, names: SampleNames
    ) -> Bool {
        let count = Int64(event.count)
        events = events.saturatingAdding(count)
        if occurredAt < firstSeen { firstSeen = occurredAt }
        if occurredAt > lastSeen { lastSeen = occurredAt }
        if let install, install != lastInstall {
            installs.insert(hash: install)
            lastInstall = install
        }
        if event.backendRelease >= 0 {
            addRelease(strings[Int(event.backendRelease)], count: count)
        }
        if let sample, sample != lastSample {
            lastSample = sample
            samples.insert(sample, names: names)
        }
        guard isOwnType, let counter, (event.widgetType < 0) == counterTypeIsNil else { return false }
        counter.increment(by: UInt64(max(0, count)))
        return true
    }

    private mutating func addRelease(_ release: String, count: Int64) {
        if lastReleaseIndex != nil, release == lastRelease {
            pendingReleaseCount = pendingReleaseCount.saturatingAdding(count)
            return
        }
        settlePendingRelease()
        lastRelease = release
        // A series holds a few releases (at most 16): comparing them in place, where a string the decoders shared
        // is equal at its first word, costs less than hashing the release's bytes for a lookup.
        var index = releases.startIndex
        while index != releases.endIndex {
            if releases.keys[index] == release {
                releases.values[index] = releases.values[index].saturatingAdding(count)
                lastReleaseIndex = index
                return
            }
            releases.formIndex(after: &index)
        }
        releases[release] = count
        if releases.count > SeriesRollup.maxReleases {
            releases = SeriesRollup.boundedReleases(releases)
        }
        // Looked up only if the release comes again: most series of a busy minute see one event, and a second
        // hash of the release per new series cost more than the lookup it saved.
        lastReleaseIndex = nil
    }

    /// Adds the repeated release's pending events to its count.
    mutating func settlePendingRelease() {
        if pendingReleaseCount != 0, let index = lastReleaseIndex {
            releases.values[index] = releases.values[index].saturatingAdding(pendingReleaseCount)
        }
        pendingReleaseCount = 0
    }
}
