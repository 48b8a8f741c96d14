import FlowmeterModels
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
        var counters: (any SeriesCounterSource)?

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

    /// A series within an app build: the per-event hash key.
    ///
    /// It hashes the digests of its kind and widget type (their `hashValue`s, from the shard's
    /// ``StringDigestCache``) and its window, not the strings' bytes; equal slots have equal digests, so the digests
    /// also make most unequal slots differ at the first comparison.
    struct SeriesSlot: Hashable {
        var kind: DiagnosticKind
        var widgetType: String
        var window: Int64
        var kindDigest: Int
        var typeDigest: Int

        init(kind: DiagnosticKind, widgetType: String, window: Int64, kindDigest: Int, typeDigest: Int) {
            self.kind = kind
            self.widgetType = widgetType
            self.window = window
            self.kindDigest = kindDigest
            self.typeDigest = typeDigest
        }

        mutating func setWidgetType(_ type: String, digests: inout StringDigestCache) {
            widgetType = type
            typeDigest = digests.digest(type)
        }

        static func == (left: SeriesSlot, right: SeriesSlot) -> Bool {
            left.window == right.window && left.typeDigest == right.typeDigest && left.kindDigest == right.kindDigest
                && left.widgetType == right.widgetType && left.kind == right.kind
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(kindDigest)
            hasher.combine(typeDigest)
            hasher.combine(window)
        }

        /// What `Dictionary` hashes a slot by: the two digests are already SipHash outputs under the process's
        /// random seed, so a multiply-xorshift mix of them, the window and the table's seed spreads slots as well
        /// as running SipHash over them again (which cost about 320 instructions per event: a `Hasher`, three
        /// combines and a finalize) and stays as hard to flood, since the digests cannot be predicted.
        func _rawHashValue(seed: Int) -> Int {
            var mixed = UInt64(bitPattern: Int64(seed)) ^ UInt64(bitPattern: Int64(kindDigest))
            mixed = (mixed ^ (mixed >> 29)) &* 0xBF58_476D_1CE4_E5B9
            mixed ^= UInt64(bitPattern: Int64(typeDigest))
            mixed = (mixed ^ (mixed >> 32)) &* 0x94D0_49BB_1331_11EB
            mixed ^= UInt64(bitPattern: window)
            mixed = (mixed ^ (mixed >> 29)) &* 0xBF58_476D_1CE4_E5B9
            return Int(bitPattern: UInt(mixed ^ (mixed >> 32)))
        }
    }

    /// A series rollup being built, with what lets repeated events skip work.
    struct SeriesAccumulator {
        var rollup: SeriesRollup
        var lastInstall: UInt64?
        var lastCodingPath: String?
        var lastMessage: String?
        var lastPageID: String?
        /// The release of the last event that had one, and where its count sits in `rollup.releases` (nil until
        /// it is looked up; valid until a release is added: only value updates happen in between).
        var lastRelease: String?
        var lastReleaseIndex: Dictionary<String, Int64>.Index?
        /// The batch's ``SeriesCounterSource`` counter for this series' own widget type, and whether that type is
        /// nil (the series of "" holds both). Events of other types (the overflow series holds many) are counted
        /// alone; a series made for the overflow has none.
        var counter: Counter?
        var counterTypeIsNil = false

        init(rollup: SeriesRollup) {
            self.rollup = rollup
        }
    }

    /// One app build's rollups.
    struct VersionEntry {
        var windows: [MinuteWindow: VersionRollup] = [:]
        var series: [SeriesSlot: SeriesAccumulator] = [:]
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
        /// Coding paths' normalized forms for new samples; kept across drains (it holds strings, no counts).
        var paths = NormalizedPathCache()

        init(softCap: Int) {
            self.softCap = softCap
        }

        /// Everything recorded, leaving the shard empty.
        mutating func take() -> [VersionKey: VersionEntry] {
            entryCount = 0
            let taken = versions
            versions = [:]
            return taken
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
                        return events.reduce(0) { $0 + $1.count }
                    }
                    versions[key] = VersionEntry()
                }
            }
            let softCap = self.softCap
            var count = entryCount
            // Mutating through `values[index]` stays in place; `versions[key]!` may copy the entry and with it
            // every nested dictionary and sketch.
            let index = versions.index(forKey: key)!
            let lost = versions.values[index].record(
                table, batch: batch, version: key, entryCount: &count, softCap: softCap, digests: &digests,
                entryDigests: &entryDigests, paths: &paths)
            entryCount = count
            return lost
        }
    }
}

extension AggregatorShard.VersionEntry {
    mutating func record(
        _ table: EventTable, batch: AggregatorShard.Batch, version: VersionKey, entryCount: inout Int,
        softCap: Int, digests: inout StringDigestCache, entryDigests: inout [Int], paths: inout NormalizedPathCache
    ) -> Int {
        let events = table.events
        let strings = table.strings
        recordBatch(batch, version: version, entryCount: &entryCount, softCap: softCap)
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
                    kind: table.kind(of: event), widgetType: widgetType, window: window.start,
                    kindDigest: kindDigest, typeDigest: typeDigest)
                var index = series.index(forKey: slot)
                // Whether the event went to the overflow series instead of its own: its type is not the series'.
                var isRedirected = false
                if index == nil {
                    if entryCount >= softCap {
                        slot.setWidgetType(RollupAggregator.overflowLabel, digests: &digests)
                        isRedirected = true
                        index = series.index(forKey: slot)
                    }
                    if index == nil {
                        guard entryCount < 2 * softCap else {
                            lost += event.count
                            batch.countAlone(event, table: table)
                            continue
                        }
                        entryCount += 1
                        let rollupSeries = RollupSeries(version: version, kind: slot.kind, widgetType: slot.widgetType)
                        var accumulator = AggregatorShard.SeriesAccumulator(
                            rollup: SeriesRollup(
                                series: rollupSeries, window: window, events: 0, firstSeen: occurredAt,
                                lastSeen: occurredAt))
                        if let counters = batch.counters, !isRedirected {
                            accumulator.counterTypeIsNil = event.widgetType < 0
                            accumulator.counter = counters.counter(
                                appID: batch.version.appID, build: batch.version.buildConfiguration, kind: slot.kind,
                                widgetType: event.widgetType < 0 ? nil : widgetType)
                        }
                        series[slot] = accumulator
                        index = series.index(forKey: slot)
                    }
                }
                let counted = series.values[index!].add(
                    event, strings: strings, occurredAt: occurredAt, install: batch.install, isOwnType: !isRedirected,
                    paths: &paths)
                if !counted && isCounting { batch.countAlone(event, table: table) }
            }
        }
        return lost
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

    private mutating func recordBatch(
        _ batch: AggregatorShard.Batch, version: VersionKey, entryCount: inout Int, softCap: Int
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
        if let types {
            lastRegisteredTypes = types
            lastTypesWindow = window
        }
    }
}

extension VersionRollup {
    fileprivate mutating func add(_ batch: AggregatorShard.Batch, repeatsTypes: Bool) {
        batches += 1
        if batch.isClean { cleanBatches += 1 }
        decodes += Int64(max(0, batch.decodes))
        clientDiscarded = Self.saturatingSum(clientDiscarded, Int64(max(0, batch.clientDiscarded)))
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
        isOwnType: Bool, paths: inout NormalizedPathCache
    ) -> Bool {
        let count = Int64(event.count)
        rollup.events += count
        if occurredAt < rollup.firstSeen { rollup.firstSeen = occurredAt }
        if occurredAt > rollup.lastSeen { rollup.lastSeen = occurredAt }
        if let install, install != lastInstall {
            rollup.installs.insert(hash: install)
            lastInstall = install
        }
        if event.backendRelease >= 0 {
            addRelease(strings[Int(event.backendRelease)], count: count)
        }
        addSample(event, strings: strings, paths: &paths)
        guard isOwnType, let counter, (event.widgetType < 0) == counterTypeIsNil else { return false }
        counter.increment(by: UInt64(max(0, count)))
        return true
    }

    private mutating func addRelease(_ release: String, count: Int64) {
        if let index = lastReleaseIndex, release == lastRelease {
            rollup.releases.values[index] += count
            return
        }
        lastRelease = release
        if let index = rollup.releases.index(forKey: release) {
            rollup.releases.values[index] += count
            lastReleaseIndex = index
            return
        }
        rollup.releases[release] = count
        if rollup.releases.count > SeriesRollup.maxReleases {
            rollup.releases = SeriesRollup.boundedReleases(rollup.releases)
        }
        // Looked up only if the release comes again: most series of a busy minute see one event, and a second
        // hash of the release per new series cost more than the lookup it saved.
        lastReleaseIndex = nil
    }

    private mutating func addSample(
        _ event: CompactEvent, strings: UnsafeBufferPointer<String>, paths: inout NormalizedPathCache
    ) {
        // Consecutive events of a series usually repeat the same place and message: skip them outright, comparing
        // the table's strings in place.
        if !rollup.samples.isEmpty, Self.names(event.codingPath, in: strings, lastCodingPath),
            Self.names(event.message, in: strings, lastMessage), Self.names(event.pageID, in: strings, lastPageID)
        {
            return
        }
        let codingPath = event.codingPath < 0 ? nil : strings[Int(event.codingPath)]
        let message = event.message < 0 ? nil : strings[Int(event.message)]
        let pageID = event.pageID < 0 ? nil : strings[Int(event.pageID)]
        lastCodingPath = codingPath
        lastMessage = message
        lastPageID = pageID
        insertSample(codingPath: codingPath, message: message, pageID: pageID, paths: &paths)
    }

    /// Whether table entry `index` (or its absence) is `value`.
    @inline(__always)
    private static func names(_ index: Int32, in strings: UnsafeBufferPointer<String>, _ value: String?) -> Bool {
        guard index >= 0 else { return value == nil }
        guard let value else { return false }
        return strings[Int(index)] == value
    }

    /// Takes the triple into the samples if it belongs there; false when it changed nothing.
    @discardableResult
    private mutating func insertSample(
        codingPath: String?, message: String?, pageID: String?, paths: inout NormalizedPathCache
    ) -> Bool {
        // Decide against the kept samples without building the normalized path: most events repeat a kept
        // (path, message) or order after the last kept sample.
        let path = codingPath ?? ""
        let last = rollup.samples.count - 1
        let isFull = rollup.samples.count == SeriesRollup.maxSamples
        // The samples are sorted by path. A full set refuses a path after its last one's outright: the common case
        // in a series that has seen a few places, decided with one comparison, whose order is kept for below.
        let orderToLast =
            isFull
            ? RollupSample.compareNormalized(path, to: rollup.samples[last].codingPath) : .orderedAscending
        if orderToLast == .orderedDescending { return false }
        for index in rollup.samples.indices {
            let order =
                isFull && index == last
                ? orderToLast : RollupSample.compareNormalized(path, to: rollup.samples[index].codingPath)
            // Before this sample's path, so before every later one's too: none matches.
            if order == .orderedAscending { break }
            if order == .orderedSame, rollup.samples[index].message == message {
                if RollupSample.optionalLess(pageID, rollup.samples[index].pageID) {
                    rollup.samples[index].pageID = pageID
                    return true
                }
                return false
            }
        }
        // A full set's last path with another message: kept only before the last sample's message.
        if orderToLast == .orderedSame, !RollupSample.optionalLess(message, rollup.samples[last].message) {
            return false
        }
        let normalizedPath = codingPath.map { paths.normalized($0) } ?? ""
        rollup.insertSample(RollupSample(normalizedPath: normalizedPath, message: message, pageID: pageID))
        return true
    }
}
