import HTTPServer
import Lifecycle
import Logging

/// The collector's HTTP side as a service: listens at start; asked to shut down, stops intake (new requests get 503),
/// stops accepting, answers every request in flight (suspended ones from Kafka or their deadline), and stops (off the
/// pool). Threads: libmicrohttpd's workers and `http-reaper` per listener, and the handler's `ingest-deadline`.
struct HTTPIngestService: Service {
    let name = "http-server"
    let server: HTTPServer
    /// The operations listener (`--ops-listen`), started before and stopped after the ingest listener.
    let operationsServer: HTTPServer?
    let ingest: IngestHandler
    let configuration: CollectorConfiguration
    let logger: Logger

    func run() async throws {
        try start()
        await waitForShutdown()
        await stop()
    }

    /// Starts the ingest handler's deadline thread and listens; on failure stops what it started.
    func start() throws(CollectorError) {
        if let operationsServer, let address = configuration.opsListen {
            do {
                try operationsServer.start()
            } catch {
                throw CollectorError(
                    .listenFailed, "could not listen on \(address.host):\(address.port) (--ops-listen): \(error)")
            }
            logger.info("operations listening", ["address": "\(address.host):\(operationsServer.port)"])
        }
        ingest.start()
        do {
            try server.start()
        } catch {
            ingest.stop()
            operationsServer?.stop()
            throw CollectorError(
                .listenFailed, "could not listen on \(configuration.host):\(configuration.port): \(error)")
        }
        logger.info(
            "collector listening",
            [
                "address": "\(configuration.host):\(server.port)", "kafka": configuration.kafka.description,
                "ack": configuration.ackMode.rawValue, "collector": configuration.collectorID,
            ])
    }

    /// Stops intake and accepting, drains what is in flight, stops; returns whether the drain finished in time.
    @discardableResult
    func stop() async -> Bool {
        ingest.stopIntake()
        server.stopAccepting()
        // Suspended batches end at their deadline at the latest; give them that long, plus a little.
        let drained = await server.drain(timeout: configuration.responseDeadline + .seconds(1))
        ingest.stop()
        await server.stopOnThread()
        await operationsServer?.stopOnThread()
        return drained
    }
}
