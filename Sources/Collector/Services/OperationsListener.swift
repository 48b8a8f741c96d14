package import HTTPServer

/// The operations listener of docs/api.md#operations-endpoints (`--ops-listen`): `/metrics`, `/healthz` and `/readyz`
/// on an address of their own, so the per-app and per-type series never reach the network the apps post to.
///
/// A small server: two threads, a few connections, small bodies (its routes take none). The collector's
/// `--ops-listen` and the one of `flowmeter sink` and `flowmeter watch` (`OperationsServer`) are both made here.
package enum OperationsListener {
    /// The operations routes: `/healthz`, `/readyz` and `/metrics` with the given handlers.
    package static func router(
        health: @escaping HTTPHandler, readiness: @escaping HTTPHandler, metrics: @escaping HTTPHandler
    )
        -> HTTPRouter
    {
        var router = HTTPRouter()
        router.add(.get, "/healthz", handler: health)
        router.add(.get, "/readyz", handler: readiness)
        router.add(.get, "/metrics", handler: metrics)
        return router
    }

    /// A server for `router` on `address`; listens at `start()`.
    package static func server(address: CollectorConfiguration.ListenAddress, router: HTTPRouter) -> HTTPServer {
        var configuration = HTTPServerConfiguration()
        configuration.host = address.host
        configuration.port = address.port
        configuration.threadPoolSize = 2
        configuration.connectionLimit = 64
        configuration.perIPConnectionLimit = 64
        configuration.maxBodyBytes = 64 * 1024
        configuration.maxBodyBytesInFlight = 1 << 20
        return HTTPServer(configuration: configuration, router: router)
    }
}
