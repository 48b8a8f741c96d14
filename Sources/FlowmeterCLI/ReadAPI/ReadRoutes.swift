import Collector
import Detector
import HTTPServer

/// The routes `flowmeter serve` adds beside the collector's when it has a store: the read API and the console.
enum ReadRoutes {
    /// The read API's and the console's routes over the store at `storeURL`; `ownersPath` (serve's `--owners`)
    /// answers `team`.
    static func routes(keys: IngestKeys, storeURL: String, ownersPath: String?, owners: OwnerRules?) -> [HTTPRoute] {
        let service = ReadService(queries: ReadQueries(storeURL: storeURL, ownersPath: ownersPath), keys: keys)
        return ReadAPIRoutes.routes(service)
            + ConsoleRoutes(service: service, sessions: ConsoleSessions(), owners: owners).routes
    }
}
