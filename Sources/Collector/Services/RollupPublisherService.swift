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

    /// Stops the flush thread and sends what is left; once it is delivered (or the bound passed), the last
    /// watermark, which says the collector stopped when nothing is missing.
    func stop() async {
        publisher.stop()
        await flush()
        if let producer {
            _ = await producer.flush(timeout: flushTimeout)
            if publisher.pendingCount > 0 {
                await flush()
                _ = await producer.flush(timeout: flushTimeout)
            }
        }
        await onThread(named: "rollup-flush-now") { [publisher] in publisher.publishFinalWatermark() }
    }

    /// Sends the rollups accumulated so far now; returns how many partial rollups were sent.
    @discardableResult
    func flush() async -> Int {
        await onThread(named: "rollup-flush-now") { [publisher] in publisher.flush() }
    }
}
