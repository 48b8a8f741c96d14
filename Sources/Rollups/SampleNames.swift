import FlowmeterModels
import FlowmeterWire

/// The strings an aggregator shard's samples name (normalized coding paths, messages and pages), each once, by a
/// small id, so that deciding whether an event changes a series' samples compares ids, not strings.
///
/// The decision runs for nearly every event, and with thousands of live series it was mostly waiting for memory:
/// each series' last-seen strings, its sample array and the samples' strings were out of cache, and copying the
/// event's strings into the series cost a retain and a release each (measured with `flowmeter-bench rollups` and
/// cachegrind). With ids, a series keeps its samples inline (``SampleKeys``) and the only strings a decision reads
/// are this table's, a few hundred that stay in cache; they are compared only to order two different ids.
///
/// Ids are equal exactly when the strings are (`==`, the equality ``RollupSample/isSameSample(as:)`` uses). A
/// table lives from one drain to the next (the shard takes it with its rollups) and holds at most `capacity`
/// strings: once full, an event naming a string it does not hold is not sampled (its counts are kept), so a flood
/// of distinct messages cannot grow it without bound. Not thread-safe: one per shard, under its lock.
struct SampleNames {
    /// Returned for a string that is not held and could not be added: the table is full.
    static let full: Int32 = -2
    /// A message or page that is absent (nil), which orders before every string.
    static let absent: Int32 = -1

    private(set) var strings: [String] = []
    private var ids: [String: Int32] = [:]
    /// Front caches by the string's identity, then by its bytes. The decoders hand out the same `String` for a
    /// value that comes back (the collector's interners), so most lookups end at the first, which compares two
    /// words; the second hashes the bytes a word at a time and compares them with one held string, where `ids`
    /// would run SipHash over them.
    private var identities = IdentityCache()
    private var pathIdentities = IdentityCache()
    private var cache = StringKeyedCache<Int32>(slots: 1_024, placeholder: 0)
    private var pathCache = StringKeyedCache<Int32>(slots: 1_024, placeholder: 0)
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The id of `string`, added if new; ``full`` when it is new and the table is full.
    mutating func id(of string: String) -> Int32 {
        if let id = identities.id(of: string) { return id }
        if let id = cache.cached(string) {
            identities.keep(id, for: string)
            return id
        }
        let id = lookUp(string)
        if id >= 0 {
            cache.keep(id, for: string)
            identities.keep(id, for: string)
        }
        return id
    }

    /// The id of `raw`'s normalized form (``RollupSample/normalizedPath(_:)``), added if new; ``full`` when it is
    /// new and the table is full.
    mutating func pathID(of raw: String, paths: inout NormalizedPathCache) -> Int32 {
        if let id = pathIdentities.id(of: raw) { return id }
        if let id = pathCache.cached(raw) {
            pathIdentities.keep(id, for: raw)
            return id
        }
        let id = lookUp(paths.normalized(raw))
        if id >= 0 {
            pathCache.keep(id, for: raw)
            pathIdentities.keep(id, for: raw)
        }
        return id
    }

    private mutating func lookUp(_ string: String) -> Int32 {
        if let id = ids[string] { return id }
        guard strings.count < capacity else { return Self.full }
        let id = Int32(strings.count)
        strings.append(string)
        ids[string] = id
        return id
    }

    /// The string of a message or page id; nil for ``absent``.
    func optionalString(_ id: Int32) -> String? {
        id < 0 ? nil : strings[Int(id)]
    }

    /// Whether `lhs` sorts before `rhs` in ``RollupSample`` order: by path, message and page, each by UTF-8 bytes,
    /// absent first. Equal ids are equal strings, so only different ones are compared.
    func precedes(_ lhs: SampleKey, _ rhs: SampleKey) -> Bool {
        if lhs.path != rhs.path { return utf8Less(strings[Int(lhs.path)], strings[Int(rhs.path)]) }
        if lhs.message != rhs.message { return optionalPrecedes(lhs.message, rhs.message) }
        return optionalPrecedes(lhs.page, rhs.page)
    }

    private func optionalPrecedes(_ lhs: Int32, _ rhs: Int32) -> Bool {
        if lhs == rhs { return false }
        if lhs < 0 { return true }
        if rhs < 0 { return false }
        return utf8Less(strings[Int(lhs)], strings[Int(rhs)])
    }
}

/// A direct-mapped cache of ids by a string's identity: its two words, which name its storage object (or, for a
/// string of up to 15 bytes, hold its bytes). An entry holds its string, so the object cannot be freed and another
/// string take its address while the entry lives: equal words are the same string.
struct IdentityCache {
    private struct Entry {
        /// All zero in an empty entry, which no string's words are (an empty string's are not).
        var low: UInt64 = 0
        var high: UInt64 = 0
        var string = ""
        var id: Int32 = 0
    }

    private var entries = [Entry](repeating: Entry(), count: 1_024)

    @inline(__always)
    private static func words(of string: String) -> (low: UInt64, high: UInt64) {
        unsafeBitCast(string, to: (UInt64, UInt64).self)
    }

    @inline(__always)
    private static func slot(_ words: (low: UInt64, high: UInt64)) -> Int {
        let mixed = (words.low ^ (words.high &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed >> 54)
    }

    /// The id kept for this very string, if any.
    @inline(__always)
    func id(of string: String) -> Int32? {
        let words = Self.words(of: string)
        let slot = Self.slot(words)
        return entries[slot].low == words.low && entries[slot].high == words.high ? entries[slot].id : nil
    }

    /// Keeps `id` for `string`, replacing what its slot held.
    mutating func keep(_ id: Int32, for string: String) {
        let words = Self.words(of: string)
        entries[Self.slot(words)] = Entry(low: words.low, high: words.high, string: string, id: id)
    }
}

/// One sample as ids in the shard's ``SampleNames``: the normalized coding path (`""` when the event had none) and
/// the message and page (``SampleNames/absent`` when nil).
struct SampleKey: Equatable {
    var path: Int32
    var message: Int32
    var page: Int32

    /// Matches no event's key: what a series has seen before its first event.
    static let none = SampleKey(path: .min, message: .min, page: .min)

    /// Whether the two are the same place and message (pages aside): the distinctness a rollup keeps.
    func isSameSample(as other: SampleKey) -> Bool {
        path == other.path && message == other.message
    }
}

/// A series' samples as ids, inline: at most ``SeriesRollup/maxSamples`` (three), distinct by path and message, the
/// first in ``RollupSample`` order, kept sorted; what ``SeriesRollup/boundedSamples(_:)`` keeps, without an array.
struct SampleKeys {
    private var first = SampleKey.none
    private var second = SampleKey.none
    private var third = SampleKey.none
    private(set) var count = 0

    /// As many as a rollup keeps; the three stored fields above hold that many (the subscript traps past them).
    static let capacity = SeriesRollup.maxSamples

    subscript(position: Int) -> SampleKey {
        get {
            switch position {
            case 0: return first
            case 1: return second
            case 2: return third
            default: preconditionFailure("SampleKeys holds three samples; SeriesRollup.maxSamples is \(Self.capacity)")
            }
        }
        set {
            switch position {
            case 0: first = newValue
            case 1: second = newValue
            case 2: third = newValue
            default: preconditionFailure("SampleKeys holds three samples; SeriesRollup.maxSamples is \(Self.capacity)")
            }
        }
    }

    /// Takes `key` in if it belongs among the samples (the same result as ``SeriesRollup/boundedSamples(_:)`` over
    /// the samples and `key`).
    mutating func insert(_ key: SampleKey, names: SampleNames) {
        for position in 0..<count where self[position].isSameSample(as: key) {
            // Same place and message: keep the first by page; the order among samples does not change.
            if names.precedes(key, self[position]) { self[position] = key }
            return
        }
        var position = count
        for index in 0..<count where names.precedes(key, self[index]) {
            position = index
            break
        }
        guard position < Self.capacity else { return }
        var index = min(count, Self.capacity - 1)
        while index > position {
            self[index] = self[index - 1]
            index -= 1
        }
        self[position] = key
        count = min(count + 1, Self.capacity)
    }

    /// The samples as ``RollupSample``s, in order.
    func samples(names: SampleNames) -> [RollupSample] {
        (0..<count).map { position in
            let key = self[position]
            return RollupSample(
                normalizedPath: names.strings[Int(key.path)], message: names.optionalString(key.message),
                pageID: names.optionalString(key.page))
        }
    }
}

/// An aggregator shard's ``SampleNames`` with what resolves a batch's events to ``SampleKey``s: each table entry's
/// id found once per batch, however many events name it.
struct BatchSamples {
    var names: SampleNames
    /// Coding paths' normalized forms; kept across drains (it holds strings, no counts).
    private var paths = NormalizedPathCache()
    /// The ids of the batch's table entries as messages or pages, and as coding paths; ``unresolved`` until an
    /// event asks. Kept between batches so a batch allocates no arrays of its own.
    private var entryIDs: [Int32] = []
    private var entryPathIDs: [Int32] = []

    private static let unresolved = Int32.min

    init(names: SampleNames) {
        self.names = names
    }

    /// Starts a batch whose table holds `tableCount` strings.
    mutating func begin(tableCount: Int) {
        entryIDs.removeAll(keepingCapacity: true)
        entryIDs.append(contentsOf: repeatElement(Self.unresolved, count: tableCount))
        entryPathIDs.removeAll(keepingCapacity: true)
        entryPathIDs.append(contentsOf: repeatElement(Self.unresolved, count: tableCount))
    }

    /// The sample `event` makes, its strings read in `strings` (the batch's table); nil when one of them is new and
    /// the names are full.
    mutating func key(of event: CompactEvent, strings: UnsafeBufferPointer<String>) -> SampleKey? {
        let path = event.codingPath < 0 ? names.id(of: "") : pathID(event.codingPath, strings: strings)
        let message = event.message < 0 ? SampleNames.absent : id(event.message, strings: strings)
        let page = event.pageID < 0 ? SampleNames.absent : id(event.pageID, strings: strings)
        guard path >= 0, message != SampleNames.full, page != SampleNames.full else { return nil }
        return SampleKey(path: path, message: message, page: page)
    }

    @inline(__always)
    private mutating func id(_ entry: Int32, strings: UnsafeBufferPointer<String>) -> Int32 {
        let known = entryIDs[Int(entry)]
        if known != Self.unresolved { return known }
        let id = names.id(of: strings[Int(entry)])
        entryIDs[Int(entry)] = id
        return id
    }

    @inline(__always)
    private mutating func pathID(_ entry: Int32, strings: UnsafeBufferPointer<String>) -> Int32 {
        let known = entryPathIDs[Int(entry)]
        if known != Self.unresolved { return known }
        let id = names.pathID(of: strings[Int(entry)], paths: &paths)
        entryPathIDs[Int(entry)] = id
        return id
    }
}
