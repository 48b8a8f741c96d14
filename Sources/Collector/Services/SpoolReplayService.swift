import Kafka
import Lifecycle
import Logging

/// The disk spool as a service: starts the threshold watch and the replay; asked to shut down (after the HTTP server
/// stopped, before the producer does) spools every batch still waiting for Kafka, stops
/// the replay, lets Kafka take what is in flight within `flushTimeout` when it answers, and closes the spool.
///
/// Whatever Kafka has not persisted by then stays in the spool and is replayed at the next start.
struct SpoolReplayService: Service {
    let name = "spool-replay"
    let delivery: SpoolingDelivery
    let replay: SpoolReplay
    let producer: KafkaProducer
    let health: KafkaHealth
    let flushTimeout: Duration
    let logger: Logger

    func run() async throws {
        start()
        await waitForShutdown()
        await stop()
    }

    /// Starts the threshold thread and the replay.
    func start() {
        delivery.start()
        replay.start()
        let recovery = delivery.spool.recovery
        if recovery.records > 0 {
            logger.info("replaying the spool", ["records": String(recovery.records)])
        }
    }

    /// Spools what waits, stops the replay, flushes within the bound while Kafka answers, closes the spool.
    func stop() async {
        await delivery.spoolWaiting(timeout: .seconds(10))
        await replay.stop()
        // Everything is on disk now; the flush only saves replaying what Kafka is about to persist anyway.
        if health.isUp && producer.counters.queueDepth > 0 {
            _ = await producer.flush(timeout: flushTimeout)
        }
        let spool = delivery.spool
        await onThread(named: "spool-close") { spool.close() }
        let status = spool.status
        if status.records > 0 {
            logger.info(
                "spool closed with records for the next start",
                ["records": String(status.records), "bytes": String(status.bytes)])
        }
    }
}
