public import FlowmeterModels
import Foundation
public import Lifecycle
public import Logging
import RollupStore
public import Rollups

/// Keeps a ``CompatibilityCache`` fresh: builds a ``CompatibilityIndex`` from the store at start and then every
/// ``CompatibilityConfiguration/refreshInterval``, on a thread of its own (the store's reads block).
///
/// A failed refresh is logged and the previous answers stay; the next interval tries again.
public struct CompatibilityRefresh: Service {
    public let name = "compatibility-refresh"
    /// The store it reads.
    public let store: any RollupReader
    /// The cache it fills.
    public let cache: CompatibilityCache
    /// Its settings.
    public let configuration: CompatibilityConfiguration
    private let logger: Logger
    private let clock: @Sendable () -> Timestamp

    /// A service that fills `cache` from `store`; `clock` is the system clock unless given.
    public init(
        store: any RollupReader, cache: CompatibilityCache, configuration: CompatibilityConfiguration,
        logger: Logger, clock: (@Sendable () -> Timestamp)? = nil
    ) {
        self.store = store
        self.cache = cache
        self.configuration = configuration
        self.logger = logger
        self.clock = clock ?? { Timestamp(Date()) }
    }

    public func run() async throws {
        while !isShuttingDown {
            let (store, configuration, now) = (store, configuration, clock())
            let built = await onThread(named: "compat-refresh") {
                Result { try Self.index(from: store, configuration: configuration, now: now) }
            }
            switch built {
            case .success(let index):
                cache.replace(with: index)
            case .failure(let error):
                logger.error(
                    "compatibility refresh failed; the previous answers stay",
                    ["error": String(describing: error)])
            }
            guard await sleepUnlessShuttingDown(for: configuration.refreshInterval) else { break }
        }
    }

    /// Reads what the answers need from `store` and builds them: every manifest, the version rollups and the known
    /// types of the traffic window, the unknown types of the last 24 h. Blocks on the store.
    public static func index(
        from store: any RollupReader, configuration: CompatibilityConfiguration, now: Timestamp
    ) throws -> CompatibilityIndex {
        let end = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch + 60)
        let trafficStart = Timestamp(
            secondsSinceEpoch: now.secondsSinceEpoch - configuration.trafficWindow.components.seconds)
        let unknownStart = Timestamp(
            secondsSinceEpoch: now.secondsSinceEpoch - configuration.unknownWindow.components.seconds)
        let manifests = try store.manifests(appID: nil)
        let versions = try store.versionRollups(from: trafficStart, to: end, appID: nil)
        // One bucket for the whole window: only which types each version reported matters here.
        let span = max(60, end.secondsSinceEpoch - trafficStart.secondsSinceEpoch)
        let known = try store.seriesBuckets(
            SeriesQuery(from: trafficStart, to: end, kinds: [.malformedPayload, .duplicateID]), bucketSeconds: span)
        let unknown = try store.seriesBuckets(
            SeriesQuery(from: unknownStart, to: end, kinds: [.unknownType]), bucketSeconds: span)
        return CompatibilityIndex(
            manifests: manifests, versions: versions, known: known, unknown: unknown,
            maxVersions: configuration.maxVersions, builtAt: now)
    }
}
