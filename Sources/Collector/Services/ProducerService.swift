import Kafka
import Lifecycle
import Logging

/// The producer's poll loop as a service: the producer polls from its own thread from the moment it is made; when
/// cancelled (after everything that sends through it stopped) it flushes within the bound and stops.
struct ProducerService: Service {
    let name = "kafka-producer"
    let producer: KafkaProducer
    let flushTimeout: Duration
    let logger: Logger

    func run() async throws {
        await waitUntilCancelled()
        await stop()
    }

    /// Flushes within the bound and stops; returns how many messages were not persisted.
    @discardableResult
    func stop() async -> Int {
        let unflushed = await producer.shutdown(timeout: flushTimeout)
        if unflushed > 0 {
            logger.error("messages not persisted at shutdown", ["count": String(unflushed)])
        }
        return unflushed
    }
}
