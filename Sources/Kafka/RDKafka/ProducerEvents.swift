import CRdKafka
import FlowmeterModels
import FlowmeterWire
import Synchronization

/// What the producer's librdkafka callbacks report into: one per `KafkaProducer`, shared by every handle it builds.
///
/// It is the handles' opaque, so it must outlive them; the producer core owns it and destroys handles first.
final class ProducerEvents: Sendable {
    let delivered = Atomic<UInt64>(0)
    let failed = Atomic<UInt64>(0)
    let rebuilds = Atomic<UInt64>(0)
    /// Set by the error callback on `RD_KAFKA_RESP_ERR__FATAL`; the poll thread clears it and rebuilds.
    let fatalPending = Atomic<Bool>(false)
    let lastError = Mutex<KafkaError?>(nil)
    let latestStatistics = Mutex<String?>(nil)
    /// Why the brokers cannot be reached now, for readiness.
    let connection: ConnectionWatch
    let deliveryObserver: (@Sendable (KafkaDeliveryReport) -> Void)?
    /// One header-list pool per set of headers produced with (a handful: one per topic); they live as long as the
    /// producer, so a message's slot may point at its pool unretained.
    private let headerPools = Mutex<[RDKafkaHeaderPool]>([])
    /// The most header sets pooled; messages with others get their lists built by librdkafka.
    static let maxHeaderPools = 16

    init(
        deliveryObserver: (@Sendable (KafkaDeliveryReport) -> Void)?,
        connectionObserver: (@Sendable (KafkaError?) -> Void)? = nil
    ) {
        self.deliveryObserver = deliveryObserver
        self.connection = ConnectionWatch(onChange: connectionObserver)
    }

    /// The pool of lists holding `headers`, made on first use.
    func headerPool(for headers: [KafkaHeader]) -> RDKafkaHeaderPool? {
        headerPools.withLock { pools in
            if let pool = pools.first(where: { $0.headers == headers }) { return pool }
            // Headers that vary per message (a batch record's app and event count) would make a pool each: past a
            // few sets, librdkafka builds the lists itself.
            guard pools.count < Self.maxHeaderPools else { return nil }
            let pool = RDKafkaHeaderPool(headers: headers)
            pools.append(pool)
            return pool
        }
    }

    /// Header lists built by every pool, and kept by them now.
    var headerListsBuilt: Int { headerPools.withLock { $0.reduce(0) { $0 + $1.built.load(ordering: .relaxed) } } }
    var headerListsKept: Int { headerPools.withLock { $0.reduce(0) { $0 + $1.keptCount } } }

    func deliveryReported(_ message: UnsafePointer<rd_kafka_message_t>) {
        guard let opaque = message.pointee._private else { return }
        let slot = opaque.assumingMemoryBound(to: DeliveryTracker.Slot.self).pointee
        if let pool = slot.headerPool {
            // The list goes back to its pool instead of being destroyed with the message.
            var list: OpaquePointer?
            if rd_kafka_message_detach_headers(UnsafeMutablePointer(mutating: message), &list)
                == RD_KAFKA_RESP_ERR_NO_ERROR, let list
            {
                // The pools live as long as the producer: borrowed, not retained.
                pool._withUnsafeGuaranteedRef { $0.give(list) }
            }
        }
        // Retained for the call: the last report releases the tracker's hold on itself inside `record`.
        let tracker = slot.tracker.takeUnretainedValue()
        let persistence = RDKafkaError.persistence(rd_kafka_message_status(message))
        let code = message.pointee.err
        let error: KafkaError? =
            code == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : RDKafkaError.make(code, persistence: persistence)
        let report = KafkaDeliveryReport(
            index: slot.index,
            persistence: error == nil ? .persisted : persistence,
            error: error,
            partition: Int(message.pointee.partition),
            offset: message.pointee.offset,
            latencyNanoseconds: MonotonicClock.nanoseconds() - tracker.enqueuedAt
        )
        if error == nil {
            connection.answered()
            delivered.wrappingAdd(1, ordering: .relaxed)
        } else {
            failed.wrappingAdd(1, ordering: .relaxed)
        }
        deliveryObserver?(report)
        tracker.record(report)
    }

    func errorReported(_ handle: OpaquePointer, code: rd_kafka_resp_err_t, reason: String) {
        if code == RD_KAFKA_RESP_ERR__FATAL {
            var buffer = [CChar](repeating: 0, count: 512)
            let underlying = rd_kafka_fatal_error(handle, &buffer, buffer.count)
            let error = KafkaError(
                .fatal, "\(KafkaError.Code(underlying)): \(RDKafkaError.string(from: buffer))", isRetriable: true)
            lastError.withLock { $0 = error }
            fatalPending.store(true, ordering: .releasing)
        } else {
            let error = RDKafkaError.make(code, reason: reason)
            lastError.withLock { $0 = error }
            connection.reported(error)
        }
    }

    func statisticsReported(_ json: String) {
        latestStatistics.withLock { $0 = json }
        connection.statisticsReported(json)
    }
}
