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
public struct SeriesRollup: Sendable, Equatable {
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

    /// Adds `other`'s events into this rollup; both must have the same series and window.
    ///
    /// Counts saturate at `Int64.max` rather than trap, so a message with absurd counts cannot crash the store.
    public mutating func merge(_ other: SeriesRollup) {
        precondition(window == other.window, "merging rollups of different windows")
        merge(contentsOf: other)
    }

    /// Adds `other`'s events into this rollup whatever `other`'s window (as ``merge(_:)`` does when the windows are
    /// equal): how the store merges a minute into its hour's row without a copy of the minute; same series only.
    package mutating func merge(contentsOf other: SeriesRollup) {
        precondition(series == other.series, "merging rollups of different series")
        events = events.saturatingAdding(other.events)
        installs.merge(other.installs)
        firstSeen = min(firstSeen, other.firstSeen)
        lastSeen = max(lastSeen, other.lastSeen)
        if !other.releases.isEmpty {
            releases.merge(other.releases) { $0.saturatingAdding($1) }
            if releases.count > Self.maxReleases { releases = Self.boundedReleases(releases) }
        }
        if !other.samples.isEmpty {
            samples = Self.mergedSamples(samples, other.samples)
        }
    }

    /// `boundedSamples(lhs + rhs)`, without the concatenation and the sort when both are sorted (as a rollup's
    /// samples are): then the sorted whole is the two merged in order, and when `lhs` is already full and nothing of
    /// `rhs` sorts before its last, it is `lhs` itself (the same array, so a caller can tell nothing changed).
    static func mergedSamples(_ lhs: [RollupSample], _ rhs: [RollupSample]) -> [RollupSample] {
        guard isSorted(lhs), isSorted(rhs) else { return boundedSamples(lhs + rhs) }
        if lhs.count == maxSamples, let last = lhs.last, isDistinct(lhs), !rhs.contains(where: { $0 < last }) {
            return lhs
        }
        var kept: [RollupSample] = []
        kept.reserveCapacity(maxSamples)
        var left = 0
        var right = 0
        var keptFromRight = false
        while kept.count < maxSamples, left < lhs.count || right < rhs.count {
            let sample: RollupSample
            let isFromRight = !(right == rhs.count || (left < lhs.count && !(rhs[right] < lhs[left])))
            if isFromRight {
                sample = rhs[right]
                right += 1
            } else {
                sample = lhs[left]
                left += 1
            }
            if let last = kept.last, last.isSameSample(as: sample) { continue }
            kept.append(sample)
            keptFromRight = keptFromRight || isFromRight
        }
        // Nothing of `rhs` kept, and `lhs` as bounding leaves it: the same samples, so the same array.
        if !keptFromRight && lhs.count <= maxSamples && isDistinct(lhs) { return lhs }
        return kept
    }

    /// Whether `samples` are as ``boundedSamples(_:)`` leaves them: sorted, distinct, at most ``maxSamples``.
    package static func isBounded(_ samples: [RollupSample]) -> Bool {
        samples.count <= maxSamples && isSorted(samples) && isDistinct(samples)
    }

    /// Whether no sample of `samples` sorts before the one before it.
    private static func isSorted(_ samples: [RollupSample]) -> Bool {
        var index = 1
        while index < samples.count {
            if samples[index] < samples[index - 1] { return false }
            index += 1
        }
        return true
    }

    /// Whether no two neighbours of `samples` are the same sample (``RollupSample/isSameSample(as:)``).
    private static func isDistinct(_ samples: [RollupSample]) -> Bool {
        var index = 1
        while index < samples.count {
            if samples[index].isSameSample(as: samples[index - 1]) { return false }
            index += 1
        }
        return true
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
    package static func boundedSamples(_ samples: [RollupSample]) -> [RollupSample] {
        var kept: [RollupSample] = []
        kept.reserveCapacity(maxSamples)
        for sample in samples.sorted() where kept.count < maxSamples {
            if let last = kept.last, last.isSameSample(as: sample) { continue }
            kept.append(sample)
        }
        return kept
    }
}
