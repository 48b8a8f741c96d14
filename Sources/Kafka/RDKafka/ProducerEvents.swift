import CRdKafka
import FlowmeterModels
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
    let deliveryObserver: (@Sendable (KafkaDeliveryReport) -> Void)?

    init(deliveryObserver: (@Sendable (KafkaDeliveryReport) -> Void)?) {
        self.deliveryObserver = deliveryObserver
    }

    func deliveryReported(_ message: UnsafePointer<rd_kafka_message_t>) {
        guard let opaque = message.pointee._private else { return }
        let slot = opaque.assumingMemoryBound(to: DeliveryTracker.Slot.self).pointee
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
            lastError.withLock { $0 = RDKafkaError.make(code, reason: reason) }
        }
    }

    func statisticsReported(_ json: String) {
        latestStatistics.withLock { $0 = json }
    }
}
