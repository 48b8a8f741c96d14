public import FlowmeterModels

/// One series' events in one minute: counts, distinct installs, time range, backend releases and a few samples.
///
/// Partial rollups of the same series and window from any number of collectors and flushes combine with
/// ``merge(_:)``. The merge laws, tested as properties:
/// - commutative, always exactly;
/// - associative exactly for `events`, `installs`, `firstSeen`, `lastSeen` and `samples` (samples keep the first
///   ``maxSamples`` distinct (codingPath, message) pairs by a fixed order, so every kept pair survives every merge
///   order);
/// - `releases` keeps the ``maxReleases`` largest counts (ties by name). That is exactly associative whenever the
///   merged rollups carry at most ``maxReleases`` distinct releases between them (the normal case: a series sees a
///   handful of backend releases a minute); beyond that, a release dropped early cannot come back, so each kept count
///   is a lower bound of its true count and the kept counts never sum to more than `events`.
public struct SeriesRollup: Sendable, Codable, Equatable {
    /// The most backend releases a rollup keeps.
    public static let maxReleases = 16
    /// The most samples a rollup keeps.
    public static let maxSamples = 3

    /// What is counted.
    public var series: RollupSeries
    /// The minute of the events' skew-corrected `occurredAt`.
    public var window: MinuteWindow
    /// The sum of the events' `count`.
    public var events: Int64
    /// The distinct installs (the `installHash` of every event's batch).
    public var installs: HyperLogLog
    /// The earliest `occurredAt`.
    public var firstSeen: Timestamp
    /// The latest `occurredAt`.
    public var lastSeen: Timestamp
    /// Events per `backendRelease` (`service@version`); at most ``maxReleases``, the largest counts, ties by name.
    public var releases: [String: Int64]
    /// At most ``maxSamples`` samples with distinct (codingPath, message), the first in ``RollupSample`` order,
    /// kept sorted.
    public var samples: [RollupSample]

    /// Creates a rollup; `releases` and `samples` are bounded and ordered as the type requires.
    public init(
        series: RollupSeries, window: MinuteWindow, events: Int64, installs: HyperLogLog = HyperLogLog(),
        firstSeen: Timestamp, lastSeen: Timestamp, releases: [String: Int64] = [:], samples: [RollupSample] = []
    ) {
        self.series = series
        self.window = window
        self.events = events
        self.installs = installs
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.releases = Self.boundedReleases(releases)
        self.samples = Self.boundedSamples(samples)
    }

    /// Decodes a rollup, bounding `releases` and `samples` as the type requires (a message from a foreign or broken
    /// producer cannot make a rollup hold more).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            series: try container.decode(RollupSeries.self, forKey: .series),
            window: try container.decode(MinuteWindow.self, forKey: .window),
            events: try container.decode(Int64.self, forKey: .events),
            installs: try container.decode(HyperLogLog.self, forKey: .installs),
            firstSeen: try container.decode(Timestamp.self, forKey: .firstSeen),
            lastSeen: try container.decode(Timestamp.self, forKey: .lastSeen),
            releases: try container.decodeIfPresent([String: Int64].self, forKey: .releases) ?? [:],
            samples: try container.decodeIfPresent([RollupSample].self, forKey: .samples) ?? [])
    }

    /// Adds `other`'s events into this rollup; both must have the same series and window.
    ///
    /// Counts saturate at `Int64.max` rather than trap, so a message with absurd counts cannot crash the store.
    public mutating func merge(_ other: SeriesRollup) {
        precondition(series == other.series && window == other.window, "merging rollups of different series")
        events = events.saturatingAdding(other.events)
        installs.merge(other.installs)
        firstSeen = min(firstSeen, other.firstSeen)
        lastSeen = max(lastSeen, other.lastSeen)
        if !other.releases.isEmpty {
            releases.merge(other.releases) { $0.saturatingAdding($1) }
            if releases.count > Self.maxReleases { releases = Self.boundedReleases(releases) }
        }
        if !other.samples.isEmpty {
            samples = Self.boundedSamples(samples + other.samples)
        }
    }

    /// The releases most frequent first, ties by name: the order the CLI prints them in.
    public var releasesByFrequency: [(release: String, events: Int64)] {
        releases.sorted { Self.releaseRanksBefore($0, $1) }.map { (release: $0.key, events: $0.value) }
    }

    /// Whether `lhs` ranks before `rhs`: more events first, then the name by UTF-8 bytes.
    static func releaseRanksBefore(_ lhs: (key: String, value: Int64), _ rhs: (key: String, value: Int64)) -> Bool {
        lhs.value != rhs.value ? lhs.value > rhs.value : utf8Less(lhs.key, rhs.key)
    }

    /// `releases` cut to the ``maxReleases`` that rank first.
    static func boundedReleases(_ releases: [String: Int64]) -> [String: Int64] {
        guard releases.count > maxReleases else { return releases }
        let kept = releases.sorted { releaseRanksBefore($0, $1) }.prefix(maxReleases)
        return Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }

    /// `samples` sorted, one per (codingPath, message) (the first in order), cut to ``maxSamples``.
    static func boundedSamples(_ samples: [RollupSample]) -> [RollupSample] {
        var kept: [RollupSample] = []
        kept.reserveCapacity(maxSamples)
        for sample in samples.sorted() where kept.count < maxSamples {
            if let last = kept.last, last.isSameSample(as: sample) { continue }
            kept.append(sample)
        }
        return kept
    }
}
