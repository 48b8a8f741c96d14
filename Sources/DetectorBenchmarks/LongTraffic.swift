public import FlowmeterModels
import FlowmeterWire
import Foundation
public import Rollups

/// Weeks of seeded, noisy traffic from several apps, with planted incidents, as rollups in five-minute buckets.
///
/// What makes it hard, each from the field (issue 39):
/// - a daily rhythm: activity from 15% at 04:00 UTC to 100% at 16:00;
/// - a version rollout: 5.3.0 reaches most installs over days 2–6, 5.1.0 fades, 5.2.1 carries the rest;
/// - over-dispersed background: each background event carries `count` 1–4 (the SDK's pre-aggregation) from a random
///   active install, and the rate wobbles from bucket to bucket (log-normal, σ 0.2), so a bucket varies about three
///   times more than a Poisson count of the same mean;
/// - debug builds that flood now and then (never a finding);
/// - small apps (about 100 installs, a handful active at night) and a large one;
/// - a backend (`page-api`) that deploys every day at 10:00, whose release every event carries, canaries included.
///
/// Every series rollup of a bucket sits at the bucket's first minute.
public struct LongTraffic: Sendable {
    /// One app's users and background diagnostics.
    public struct App: Sendable {
        /// The app.
        public var appID: String
        /// Installs in all.
        public var installs: Int
        /// The share of installs active in a 5-minute bucket at full activity.
        public var activeShare: Double
        /// Whether batches carry `decodes` (six per batch).
        public var sendsDecodes: Bool
        /// The steady diagnostics.
        public var background: [Background]

        /// An app.
        public init(appID: String, installs: Int, activeShare: Double, sendsDecodes: Bool, background: [Background]) {
            self.appID = appID
            self.installs = installs
            self.activeShare = activeShare
            self.sendsDecodes = sendsDecodes
            self.background = background
        }
    }

    /// A steady background series of one app.
    public struct Background: Sendable {
        /// The kind.
        public var kind: DiagnosticKind
        /// The widget type.
        public var widgetType: String
        /// Mean events per bucket, all versions together, at full activity.
        public var peakEvents: Double

        /// A background series.
        public init(_ kind: DiagnosticKind, _ widgetType: String, peakEvents: Double) {
            self.kind = kind
            self.widgetType = widgetType
            self.peakEvents = peakEvents
        }
    }

    /// A stretch of a planted cause: for `buckets` buckets, a number of events in `events` (uniform) from
    /// `installShare` of the active installs.
    public struct Segment: Sendable {
        /// How many buckets it lasts.
        public var buckets: Int
        /// Events per bucket.
        public var events: ClosedRange<Int>
        /// The share of the bucket's active installs (on the plant's versions) that send them.
        public var installShare: Double

        /// A segment.
        public init(buckets: Int, events: ClosedRange<Int>, installShare: Double) {
            self.buckets = buckets
            self.events = events
            self.installShare = installShare
        }
    }

    /// A planted cause: events added to one series, and the deploy that caused it.
    public struct Plant: Sendable {
        /// What the plant stands for, for reports.
        public var name: String
        /// The app.
        public var appID: String
        /// The kind.
        public var kind: DiagnosticKind
        /// The widget type.
        public var widgetType: String
        /// When its first segment starts.
        public var start: Timestamp
        /// Its stretches, one after another.
        public var segments: [Segment]
        /// Only these app versions send it; nil: every version.
        public var versions: Set<String>?
        /// The backend release its events carry, where it is its own (a canary); nil: the release live then.
        public var release: String?
        /// Whether the detector must report it (one incident) or must not (a rise within the noise).
        public var isIncident: Bool
        /// The deploy the incident must be attributed to, as `service@version`; nil when none.
        public var expectedDeploy: String?

        /// A plant.
        public init(
            name: String, appID: String, kind: DiagnosticKind, widgetType: String, start: Timestamp,
            segments: [Segment], versions: Set<String>? = nil, release: String? = nil, isIncident: Bool = true,
            expectedDeploy: String?
        ) {
            self.name = name
            self.appID = appID
            self.kind = kind
            self.widgetType = widgetType
            self.start = start
            self.segments = segments
            self.versions = versions
            self.release = release
            self.isIncident = isIncident
            self.expectedDeploy = expectedDeploy
        }

        /// The end of its last segment.
        public var end: Timestamp {
            let buckets = segments.reduce(0) { $0 + $1.buckets }
            return Timestamp(
                secondsSinceEpoch: start.secondsSinceEpoch + Int64(buckets) * LongTraffic.bucketSeconds)
        }
    }

    /// A backend release going live: to a share of pages (a canary) or to all.
    public struct Rollout: Sendable {
        /// When it starts serving.
        public var at: Timestamp
        /// `service@version`.
        public var release: String
        /// The share of pages it serves (1: all).
        public var share: Double

        /// A rollout.
        public init(at: Timestamp, release: String, share: Double = 1) {
            self.at = at
            self.release = release
            self.share = share
        }
    }

    /// The length of a generated bucket.
    public static let bucketSeconds: Int64 = 300
    /// 2025-11-30T00:00:00Z: day 0.
    public static let epoch = Timestamp(secondsSinceEpoch: 1_764_460_800)
    /// The versions, oldest first.
    public static let versions = ["5.1.0", "5.2.1", "5.3.0"]

    /// The apps.
    public var apps: [App]
    /// How many days to generate from ``epoch``.
    public var days: Int
    /// The planted causes.
    public var plants: [Plant]
    /// Backend releases going live (besides the daily deploys), with their deploy markers.
    public var rollouts: [Rollout]
    /// The recorded deploys (daily ones added by ``generate()``).
    public var deploys: [DeployMarker]
    /// The seed of everything random.
    public var seed: UInt64

    /// A scenario.
    public init(
        apps: [App], days: Int, plants: [Plant], rollouts: [Rollout], deploys: [DeployMarker], seed: UInt64
    ) {
        self.apps = apps
        self.days = days
        self.plants = plants
        self.rollouts = rollouts
        self.deploys = deploys
        self.seed = seed
    }

    /// The time `day` days and `hour`:`minute` after ``epoch``.
    public static func time(day: Int, hour: Int, minute: Int = 0) -> Timestamp {
        let seconds = Int64(day) * 86_400 + Int64(hour) * 3600 + Int64(minute) * 60
        return Timestamp(secondsSinceEpoch: epoch.secondsSinceEpoch + seconds)
    }

    /// Activity at `time`: 0.15 at 04:00 UTC, 1 at 16:00, a cosine between.
    public static func activity(at time: Timestamp) -> Double {
        let hour = Double(time.secondsSinceEpoch % 86_400) / 3600
        return 0.15 + 0.85 * (0.5 - 0.5 * cos(2 * Double.pi * (hour - 4) / 24))
    }

    /// The share of installs on each version at `time`: 5.3.0 rolls out over days 2–6.
    static func versionShares(at time: Timestamp) -> [Double] {
        let day = Double(time.secondsSinceEpoch - epoch.secondsSinceEpoch) / 86_400
        let rollout = 1 / (1 + exp(-(day - 4) / 0.7))
        let newest = 0.85 * rollout
        let oldest = 0.15 * (1 - 0.6 * rollout)
        return [oldest, 1 - oldest - newest, newest]
    }

    // MARK: - Generating

    /// Generates the rollups and deploy markers into a store.
    public func generate() -> SyntheticRollups {
        var random = SeededRandom(seed: seed)
        var series: [SeriesRollup] = []
        var versionRollups: [VersionRollup] = []
        var deployMarkers = deploys
        var timeline = rollouts
        var lastActive: [String: [Int]] = [:]
        for day in 0..<days {
            let at = Self.time(day: day, hour: 10)
            let release = "page-api@2026.\(day + 1)-daily"
            timeline.append(Rollout(at: at, release: release))
            deployMarkers.append(DeployMarker(service: "page-api", version: "2026.\(day + 1)-daily", finishedAt: at))
        }
        timeline.sort { $0.at < $1.at }
        // Each install's place in the rollout: installs below the newest version's share run it, and so on.
        let bucketCount = days * 86_400 / Int(Self.bucketSeconds)
        for index in 0..<bucketCount {
            let start = Timestamp(secondsSinceEpoch: Self.epoch.secondsSinceEpoch + Int64(index) * Self.bucketSeconds)
            let window = MinuteWindow(containing: start)
            let activity = Self.activity(at: start)
            let shares = Self.versionShares(at: start)
            let releases = Self.releases(at: start, timeline: timeline)
            for app in apps {
                var bucket = AppBucket(app: app, window: window)
                let active = random.poisson(Double(app.installs) * app.activeShare * activity)
                // Sessions: most of those active five minutes ago still are.
                let previous = lastActive[app.appID] ?? []
                for slot in 0..<active {
                    let install =
                        slot < previous.count * 7 / 10
                        ? previous[Int(random.next() % UInt64(previous.count))]
                        : Int(random.next() % UInt64(app.installs))
                    bucket.activeInstalls.append(install)
                    bucket.addBatch(install: install, version: Self.version(of: install, app: app, shares: shares))
                }
                lastActive[app.appID] = bucket.activeInstalls
                guard !bucket.activeInstalls.isEmpty else { continue }
                for background in app.background {
                    let wobble = exp(0.2 * random.normal() - 0.02)
                    let records = random.poisson(background.peakEvents / 2.5 * activity * wobble)
                    for _ in 0..<records {
                        let install = bucket.activeInstalls[Int(random.next() % UInt64(bucket.activeInstalls.count))]
                        let release =
                            random.unit() < releases.canaryShare ? releases.canary ?? releases.full : releases.full
                        bucket.addEvents(
                            Int64(1 + random.next() % 4), kind: background.kind, widgetType: background.widgetType,
                            install: install, version: Self.version(of: install, app: app, shares: shares),
                            release: release)
                    }
                }
                for plant in plants where plant.appID == app.appID {
                    guard let segment = plant.segment(at: start) else { continue }
                    let eligible = bucket.activeInstalls.filter {
                        plant.versions?.contains(Self.version(of: $0, app: app, shares: shares)) ?? true
                    }
                    guard !eligible.isEmpty else { continue }
                    let distinct = Array(Set(eligible)).sorted()
                    let reach = max(1, Int((segment.installShare * Double(distinct.count)).rounded()))
                    var pool = distinct
                    var reached: [Int] = []
                    while reached.count < reach {
                        reached.append(pool.remove(at: Int(random.next() % UInt64(pool.count))))
                    }
                    var remaining = Int64(
                        segment.events.lowerBound
                            + Int(random.next() % UInt64(segment.events.count)))
                    while remaining > 0 {
                        let count = min(remaining, Int64(1 + random.next() % 4))
                        remaining -= count
                        let install = reached[Int(random.next() % UInt64(reached.count))]
                        bucket.addEvents(
                            count, kind: plant.kind, widgetType: plant.widgetType, install: install,
                            version: Self.version(of: install, app: app, shares: shares),
                            release: plant.release ?? releases.full)
                    }
                }
                // Developers' debug builds: a few batches, and now and then a flood of a type in development.
                if random.unit() < 0.3 {
                    bucket.addDebug(
                        events: random.unit() < 0.05 ? Int64(50 + random.next() % 200) : Int64(random.next() % 3))
                }
                series.append(contentsOf: bucket.seriesRollups)
                versionRollups.append(contentsOf: bucket.versionRollups)
            }
        }
        return SyntheticRollups(series: series, versions: versionRollups, deploys: deployMarkers)
    }

    static func version(of install: Int, app: App, shares: [Double]) -> String {
        // A fixed uniform place per install: the newest version's share takes the lowest places.
        let mixed: UInt64 = UInt64(truncatingIfNeeded: install) &* 0x9E37_79B9_7F4A_7C15
        var hash: UInt64 = mixed ^ UInt64(truncatingIfNeeded: app.installs)
        hash = (hash ^ (hash >> 29)) &* 0xBF58_476D_1CE4_E5B9
        let place = Double(hash >> 11) / 9_007_199_254_740_992
        if place < shares[2] { return versions[2] }
        if place < shares[2] + shares[1] { return versions[1] }
        return versions[0]
    }

    /// The release serving all pages at `time`, and a canary serving a share of them, if one is under way.
    static func releases(at time: Timestamp, timeline: [Rollout]) -> (
        full: String, canary: String?, canaryShare: Double
    ) {
        var full = "page-api@2026.0-daily"
        var canary: (String, Double)?
        for rollout in timeline where rollout.at <= time {
            if rollout.share >= 1 {
                full = rollout.release
                canary = nil
            } else {
                canary = (rollout.release, rollout.share)
            }
        }
        return (full, canary?.0, canary?.1 ?? 0)
    }
}

extension LongTraffic.Plant {
    /// The segment under way at `time`, if any.
    func segment(at time: Timestamp) -> LongTraffic.Segment? {
        var start = self.start
        for segment in segments {
            let end = Timestamp(
                secondsSinceEpoch: start.secondsSinceEpoch + Int64(segment.buckets) * LongTraffic.bucketSeconds)
            if start <= time && time < end { return segment }
            start = end
        }
        return nil
    }
}
