import Kafka
import Lifecycle

/// The rollup publisher as a service: flushes partial rollups every interval; when cancelled (after the HTTP server
/// stopped, so intake is over) sends the final drain, once more after a bounded producer flush when some were
/// waiting for a retry, and then the collector's last watermark.
struct RollupPublisherService: Service {
    let name = "rollup-publisher"
    let publisher: RollupPublisher
    let producer: KafkaProducer?
    let flushTimeout: Duration

    func run() async throws {
        publisher.start()
        await waitUntilCancelled()
        await stop()
    }

    /// Stops the flush thread and sends what is left; once it is delivered (waiting at most 5 s, or the flush
    /// timeout when shorter), the last watermark, which says the collector stopped when nothing is missing.
    func stop() async {
        publisher.stop()
        await flush()
        if let producer, publisher.pendingCount > 0 {
            _ = await producer.flush(timeout: flushTimeout)
            await flush()
        }
        let bound = min(flushTimeout, .seconds(5))
        await onThread(named: "rollup-flush-now") { [publisher] in publisher.publishFinalWatermark(waitingUpTo: bound) }
    }

    /// Sends the rollups accumulated so far now; returns how many partial rollups were sent.
    @discardableResult
    func flush() async -> Int {
        await onThread(named: "rollup-flush-now") { [publisher] in publisher.flush() }
    }
}
