import Lifecycle

/// Produces messages to Kafka through librdkafka, with delivery reports, bounded flush and self-repair.
///
/// The hot path is `enqueueBatch`: it never blocks and never allocates per message, and one completion reports the
/// whole batch once every message has its final delivery report. A dedicated thread (`kafka-poll`) serves
/// librdkafka's callbacks, so completions and the delivery observer run there and must be quick.
///
/// When librdkafka raises a fatal error (librdkafka 2.0.2's idempotent producer can, after disconnects), the producer
/// makes a new handle, fails the old handle's outstanding messages back to their completions as retriable, and keeps
/// going; `counters.rebuilds` counts it. Delivery is at-least-once: retries after `possiblyPersisted` may duplicate.
///
/// Call `shutdown(timeout:)` before dropping the producer; dropping it without does the same with a zero timeout.
public final class KafkaProducer: Sendable {
    /// The configuration the producer was made with.
    public let configuration: KafkaProducerConfiguration
    private let core: ProducerCore

    /// Makes a producer and starts its poll thread; throws when librdkafka rejects the configuration.
    ///
    /// - Parameters:
    ///   - deliveryObserver: called on the poll thread for every delivery report (for a latency histogram or
    ///     outcome counters); keep it cheap, it runs up to once per message.
    ///   - connectionObserver: called on librdkafka's threads when a ``connectionProblem`` begins or changes its code,
    ///     and with nil when it is over (for a log line; not at every reconnect).
    public init(
        configuration: KafkaProducerConfiguration,
        deliveryObserver: (@Sendable (KafkaDeliveryReport) -> Void)? = nil,
        connectionObserver: (@Sendable (KafkaError?) -> Void)? = nil
    ) throws {
        self.configuration = configuration
        self.core = try ProducerCore(
            properties: configuration.librdkafkaProperties(),
            events: ProducerEvents(deliveryObserver: deliveryObserver, connectionObserver: connectionObserver))
        core.startPolling()
    }

    deinit {
        _ = core.shutdown(timeout: .zero)
    }

    /// Enqueues a batch of messages and calls `completion` once, when every one of them has a final delivery report.
    ///
    /// `body` appends the messages; each append copies its bytes and returns immediately. If an append throws (say
    /// `queueFull`, which the collector answers with 503), the messages appended before it stay enqueued and will be
    /// delivered and reported to `completion` as usual; the error is then rethrown. `completion` runs exactly once in
    /// every case, on the poll thread, or on the calling thread when nothing was enqueued.
    ///
    /// - Parameters:
    ///   - capacity: the expected number of messages, to size the batch's bookkeeping; a guess is fine.
    ///   - owner: what keeps the bytes of messages appended with `appendBorrowing` alive and unchanged; the batch
    ///     holds it until `completion` has run (one block per batch that librdkafka reads without copying).
    ///   - recordsReports: whether the outcome lists every report (costs a lock per message), not only failures.
    public func enqueueBatch(
        capacity: Int = 64,
        owner: (any AnyObject & Sendable)? = nil,
        recordsReports: Bool = false,
        completion: @escaping @Sendable (KafkaBatchOutcome) -> Void,
        _ body: (inout KafkaBatchWriter) throws -> Void
    ) throws {
        let tracker = DeliveryTracker(
            capacityHint: capacity, recordsReports: recordsReports, owner: owner, completion: completion)
        defer { tracker.seal() }
        var writer = KafkaBatchWriter(client: try core.currentClient(), tracker: tracker)
        try body(&writer)
    }

    /// Produces one message and returns its delivery report once the brokers have it.
    ///
    /// Throws a `KafkaError` when it cannot be enqueued (such as `queueFull`) or when its delivery failed; the error's
    /// `isRetriable` says whether sending again is safe and `persistence` whether that may duplicate it. Cancelling the
    /// task does not withdraw a message already enqueued. Use `enqueueBatch` for throughput.
    public func send(_ message: KafkaProducerMessage) async throws -> KafkaDeliveryReport {
        let client = try core.currentClient()
        return try await withCheckedThrowingContinuation { continuation in
            let tracker = DeliveryTracker(capacityHint: 1, recordsReports: true) { outcome in
                let report = outcome.reports[0]
                if let error = report.error {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: report)
                }
            }
            var writer = KafkaBatchWriter(client: client, tracker: tracker)
            do {
                if let key = message.key {
                    try writer.append(topic: message.topic, key: key, value: message.value, headers: message.headers)
                } else {
                    try writer.append(topic: message.topic, value: message.value, headers: message.headers)
                }
                tracker.seal()
            } catch {
                tracker.cancel()
                continuation.resume(throwing: error)
            }
        }
    }

    /// Sends what is queued now instead of when `linger.ms` runs out: for a caller that knows no more messages can
    /// join the batches being built (every client is waiting for an answer). Returns at once, from any thread; the
    /// poll thread flushes for a moment (librdkafka's `rd_kafka_flush`, which counts the linger as over while it
    /// runs) on its next turn.
    public func sendQueuedNow() {
        core.sendQueuedNow()
    }

    /// The number of partitions of `topic`, asked of the brokers (waiting up to `timeout`); blocks, so call it off
    /// the cooperative pool. Throws a `KafkaError` when no broker answers in time or the topic is unknown.
    public func partitionCount(of topic: String, timeout: Duration) throws(KafkaError) -> Int {
        try core.currentClient().partitionCount(
            topic: topic, milliseconds: Int32(clamping: max(0, timeout.kafkaMilliseconds)))
    }

    /// Running totals and the current queue depth.
    public var counters: KafkaProducerCounters {
        KafkaProducerCounters(
            delivered: core.events.delivered.load(ordering: .relaxed),
            failed: core.events.failed.load(ordering: .relaxed),
            queueDepth: core.queueDepth,
            rebuilds: core.events.rebuilds.load(ordering: .relaxed),
            headerListsBuilt: core.events.headerListsBuilt,
            headerListsKept: core.events.headerListsKept
        )
    }

    /// librdkafka's latest statistics JSON (every `statisticsInterval`), or `nil` before the first.
    public var latestStatistics: String? {
        core.events.latestStatistics.withLock { $0 }
    }

    /// The last error librdkafka reported on its own (broker down, fatal), for logs and readiness; `nil` if none.
    public var lastError: KafkaError? {
        core.events.lastError.withLock { $0 }
    }

    /// Why the brokers cannot be reached now, as librdkafka last reported it: a TLS handshake that failed (``KafkaError/Code/ssl``),
    /// SASL credentials refused (``KafkaError/Code/authentication``), dropped connections or every broker down; nil
    /// once a message is delivered or the statistics list a broker as up, and before anything was tried. The reason is
    /// librdkafka's sentence, which names the broker and, for TLS, what failed to verify.
    public var connectionProblem: KafkaError? {
        core.events.connection.current
    }

    /// Waits up to `timeout` for every enqueued message to be reported; returns how many are still outstanding.
    ///
    /// Runs `rd_kafka_flush` on its own thread, so it does not hold a thread of the cooperative pool.
    public func flush(timeout: Duration) async -> Int {
        await onThread(named: "kafka-flush") { [core] in core.flush(timeout: timeout) }
    }

    /// Stops the producer: flushes within `timeout`, then fails whatever is left back to its completions (retriable,
    /// `purgedFromQueue` or `purgedInFlight`) and releases the handle. Returns how many messages were not persisted.
    ///
    /// Later enqueues throw `shutDown`. Calling it again returns 0.
    public func shutdown(timeout: Duration) async -> Int {
        await onThread(named: "kafka-shutdown") { [core] in core.shutdown(timeout: timeout) }
    }

    /// Raises a fabricated fatal error on the current handle, as librdkafka 2.0.2 can after a disconnect; for
    /// fault-injection tests of the rebuild path.
    public func injectFatalError(
        _ code: KafkaError.Code = .outOfOrderSequenceNumber,
        reason: String = "injected by a test"
    ) throws {
        let result = try core.currentClient().triggerFatalError(code, reason: reason)
        if result != .noError {
            throw KafkaError(result, "could not inject a fatal error", isRetriable: false)
        }
    }
}
