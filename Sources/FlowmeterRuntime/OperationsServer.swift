import Collector
import Foundation
import HTTPServer
public import Lifecycle
import Logging
import Metrics

/// `/healthz`, `/readyz` and `/metrics` of a process without an ingest listener (`flowmeter sink`, `flowmeter
/// watch`) on `--ops-listen HOST:PORT` (docs/api.md).
///
/// `/healthz` answers 200 while the process runs; `/readyz` answers 200 `{"status":"ready"}`, or 503
/// `{"error":"unavailable","reason","message"}` with `Retry-After` while ``Readiness`` says why not; `/metrics` is the
/// Prometheus text of the registry, refreshed first. A small server: two threads, a few connections, no bodies.
public struct OperationsServer: Service {
    public let name = "operations"
    /// Why the process is not ready now, or nil while it is: a stable word and a sentence.
    public typealias Readiness = @Sendable () -> (reason: String, message: String)?

    private let server: HTTPServer
    private let address: CollectorConfiguration.ListenAddress
    private let logger: Logger

    /// A server on `address` whose `/readyz` asks `readiness` and whose `/metrics` runs `refresh` and renders
    /// `metrics`; listens when run.
    init(
        address: CollectorConfiguration.ListenAddress, metrics: MetricsRegistry, logger: Logger,
        readiness: @escaping Readiness, refresh: @escaping @Sendable () -> Void
    ) {
        let router = OperationsListener.router(
            health: { _, responder in responder.respond(.json(status: .ok, #"{"status":"ok"}"#)) },
            readiness: { _, responder in
                guard let why = readiness() else {
                    responder.respond(.json(status: .ok, #"{"status":"ready"}"#))
                    return
                }
                let body = ["error": "unavailable", "reason": why.reason, "message": why.message]
                let bytes = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
                responder.respond(.json(status: .serviceUnavailable, Array(bytes), headers: ["Retry-After": "5"]))
            },
            metrics: { _, responder in
                refresh()
                responder.respond(
                    HTTPResponse(
                        status: .ok, headers: ["Content-Type": MetricsRegistry.contentType],
                        body: Array(metrics.render().utf8)))
            })
        server = OperationsListener.server(address: address, router: router)
        self.address = address
        self.logger = logger
    }

    /// The TCP port once listening (the one picked when the address said 0).
    public var port: UInt16 { server.port }

    public func run() async throws {
        do {
            try server.start()
        } catch {
            throw OperationsListenError(
                description: "could not listen on \(address.host):\(address.port) (--ops-listen): \(error)")
        }
        logger.info("operations listening", ["address": "\(address.host):\(server.port)"])
        await waitForShutdown()
        server.stopAccepting()
        _ = await server.drain(timeout: .seconds(2))
        await server.stopOnThread()
    }
}

/// The operations listener could not listen (the address is taken or not local).
public struct OperationsListenError: Error, CustomStringConvertible {
    /// What happened.
    public let description: String
}
