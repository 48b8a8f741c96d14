import Lifecycle
import Synchronization

/// The producer's machinery: the current handle, the poll thread that serves its callbacks, and fatal-error rebuild.
///
/// The poll thread (`kafka-poll`, a ``LoopThread``) waits in librdkafka's poll, which ``stopPolling()`` and
/// ``sendQueuedNow()`` interrupt. It holds the core, not the public `KafkaProducer`, so dropping the producer can
/// stop the thread.
final class ProducerCore: Sendable {
    private struct State {
        var client: RDKafkaClient?
        var pollLoop: LoopThread?
    }

    let properties: [String: String]
    let events: ProducerEvents
    private let state: Mutex<State>
    /// Set by ``sendQueuedNow()``; the poll thread's next turn flushes instead of polling.
    private let sendNowRequested = Atomic<Bool>(false)
    private static let pollMilliseconds: Int32 = 50
    private static let pollThreadName = "kafka-poll"
    private static let drainBound: Duration = .seconds(10)
    /// How long a requested flush may run: long enough for the broker threads to be scheduled and start their
    /// requests while librdkafka counts the linger as over, short enough that the answers it serves cannot bring
    /// many new messages into that window (they would go out in small batches).
    private static let sendNowMilliseconds: Int32 = 2

    init(properties: [String: String], events: ProducerEvents) throws {
        self.properties = properties
        self.events = events
        let client = try RDKafkaClient.make(.producer, properties: properties, events: events)
        self.state = Mutex(State(client: client))
    }

    /// The handle new messages go to; throws once the producer is shut down.
    func currentClient() throws(KafkaError) -> RDKafkaClient {
        guard let client = state.withLock({ $0.client }) else {
            throw KafkaError(.shutDown, "the producer is shut down", isRetriable: false)
        }
        return client
    }

    var queueDepth: Int {
        state.withLock { $0.client }?.outqLength ?? 0
    }

    /// Asks the poll thread to send what is queued without waiting out `linger.ms`; returns at once, from any
    /// thread. Repeated requests before the poll thread's next turn are one.
    func sendQueuedNow() {
        guard !sendNowRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        state.withLock { $0.client }?.wakePoller()
    }

    func startPolling() {
        let loop = LoopThread.start(named: Self.pollThreadName) { [self] loop in pollLoop(loop) }
        state.withLock { $0.pollLoop = loop }
    }

    private func pollLoop(_ loop: LoopThread) {
        while !loop.isStopping {
            guard let client = state.withLock({ $0.client }) else { return }
            if sendNowRequested.exchange(false, ordering: .acquiringAndReleasing) {
                // rd_kafka_flush counts linger.ms as over while it runs and serves reports as poll does.
                _ = client.flush(milliseconds: Self.sendNowMilliseconds)
            } else {
                client.poll(milliseconds: Self.pollMilliseconds)
            }
            if events.fatalPending.exchange(false, ordering: .acquiringAndReleasing) {
                rebuildIfFatal(client, loop: loop)
            }
        }
    }

    // Replaces a handle that hit a fatal error. Its outstanding messages are purged so their completions hear a
    // retriable failure (`purgedFromQueue`, `purgedInFlight` or `fatal`) instead of waiting forever.
    private func rebuildIfFatal(_ old: RDKafkaClient, loop: LoopThread) {
        guard old.hasFatalError else { return }
        let replacement: RDKafkaClient
        do {
            replacement = try RDKafkaClient.make(.producer, properties: properties, events: events)
        } catch {
            // Try again on the next turn of the loop rather than give up on the producer.
            events.fatalPending.store(true, ordering: .releasing)
            loop.wait(for: .milliseconds(100))
            return
        }
        let swapped = state.withLock { state in
            guard state.client === old else { return false }
            state.client = replacement
            return true
        }
        guard swapped else { return }
        events.rebuilds.wrappingAdd(1, ordering: .relaxed)
        old.purgeAll()
        Self.drain(old, within: Self.drainBound)
    }

    /// Polls until every report of `client` has been served or the bound passes; returns what is left.
    @discardableResult
    private static func drain(_ client: RDKafkaClient, within bound: Duration) -> Int {
        let deadline = ContinuousClock.now + bound
        while client.outqLength > 0 && ContinuousClock.now < deadline {
            client.poll(milliseconds: 100)
        }
        return client.outqLength
    }

    /// Waits up to `timeout` for every queued message to be reported; returns how many are still outstanding.
    func flush(timeout: Duration) -> Int {
        guard let client = state.withLock({ $0.client }) else { return 0 }
        return client.flush(milliseconds: Self.milliseconds(timeout))
    }

    /// Stops the poll thread, flushes within `timeout`, purges what is left (each purged message is reported to its
    /// completion as a retriable failure) and drops the handle. Returns how many messages were not persisted.
    func shutdown(timeout: Duration) -> Int {
        stopPolling()
        guard
            let client = state.withLock({ state in
                defer { state.client = nil }; return state.client
            })
        else {
            return 0
        }
        let failedBefore = events.failed.load(ordering: .relaxed)
        if client.flush(milliseconds: Self.milliseconds(timeout)) > 0 {
            client.purgeAll()
        }
        let unreported = Self.drain(client, within: .seconds(5))
        let failedDuring = events.failed.load(ordering: .relaxed) - failedBefore
        return Int(failedDuring) + unreported
    }

    /// Stops the poll thread and waits (at most 5 s) for its turn in progress to end; from a thread of its own.
    func stopPolling() {
        let (loop, client) = state.withLock { state in
            defer { state.pollLoop = nil }
            return (state.pollLoop, state.client)
        }
        guard let loop else { return }
        loop.stop()
        client?.wakePoller()
        // A completion that drops the last reference runs this on the poll thread, which cannot wait for itself
        // (`join` returns at once there); it leaves its loop on its own once the handle is gone.
        loop.join(timeout: .seconds(5))
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: max(0, duration.kafkaMilliseconds))
    }
}
