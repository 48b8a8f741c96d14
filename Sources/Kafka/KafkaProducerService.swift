public import Lifecycle
public import Logging

/// A producer's poll loop as a service: the producer polls from its own thread from the moment it is made; when
/// asked to shut down (after everything that sends through it has stopped) it flushes within the bound and stops.
public struct KafkaProducerService: Service {
    public let name = "kafka-producer"
    /// The producer it stops.
    public let producer: KafkaProducer
    /// The bound on the final flush.
    public let flushTimeout: Duration
    private let logger: Logger

    /// A service that stops `producer` within `flushTimeout`, logging what was not persisted.
    public init(_ producer: KafkaProducer, flushTimeout: Duration, logger: Logger) {
        self.producer = producer
        self.flushTimeout = flushTimeout
        self.logger = logger
    }

    public func run() async throws {
        await waitForShutdown()
        await stop()
    }

    /// Flushes within the bound and stops; returns how many messages were not persisted.
    @discardableResult
    public func stop() async -> Int {
        let unflushed = await producer.shutdown(timeout: flushTimeout)
        if unflushed > 0 {
            logger.error("messages not persisted at shutdown", ["count": String(unflushed)])
        }
        return unflushed
    }
}
