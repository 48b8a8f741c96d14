import FlowmeterModels
import HTTPServer
import Kafka
import Synchronization

/// `GET /readyz`: whether this collector can take batches now, and if not, why.
///
/// Ready while a 202 is possible: Kafka answers, or the disk spool can hold what Kafka does not take. Not ready
/// (503, with a JSON `reason`) while the spool is full or its last write failed, or, without a spool, while Kafka
/// is down (``KafkaHealth``). Never ready while librdkafka reports that this collector's connection settings are
/// refused (a TLS handshake that failed, SASL credentials rejected): a spool would only fill until someone fixes them.
/// With a sink in the same process (`flowmeter serve --store`), not ready either while that sink is stalled (its
/// store fails as a whole): the reason is the sink's own word, as on `flowmeter sink`'s `/readyz`. Always ready in
/// `--kafka none` mode unless its in-process sink is stalled.
struct Readiness: Sendable {
    /// The verdict.
    enum Verdict: Sendable, Hashable {
        /// Batches can be taken; `isSpooling` while the spool holds records Kafka has not persisted yet.
        case ready(isSpooling: Bool)
        /// Batches get 503, or the sink in this process makes no progress; `message` is a sentence for people.
        case notReady(reason: Reason, message: String)
    }

    /// Why not ready: its ``label`` is the stable word of the 503's `reason`.
    enum Reason: Sendable, Hashable {
        case kafkaTLSFailed
        case kafkaAuthenticationFailed
        case kafkaUnavailable
        case spoolWriteFailed
        case spoolFull
        /// The in-process sink is stalled; the associated word is the sink's (`SinkStall.reason`).
        case sinkStalled(String)

        /// The `reason` member of the 503.
        var label: String {
            switch self {
            case .kafkaTLSFailed: "kafka_tls_failed"
            case .kafkaAuthenticationFailed: "kafka_authentication_failed"
            case .kafkaUnavailable: "kafka_unavailable"
            case .spoolWriteFailed: "spool_write_failed"
            case .spoolFull: "spool_full"
            case .sinkStalled(let reason): reason
            }
        }
    }

    /// Why a sink in this process makes no progress now (a stable word and a sentence), or nil while it does.
    typealias SinkCheck = @Sendable () -> (reason: String, message: String)?

    let kafkaMode: CollectorConfiguration.KafkaMode
    let health: KafkaHealth
    let spool: Spool?
    /// The events producer, for the connection problem librdkafka reports; nil without Kafka.
    var producer: KafkaProducer?
    /// The in-process sink's check, attached once the sink is built (``Collector/attachSinkReadiness(_:)``).
    let sink = SinkSlot()

    /// Holds the in-process sink's check; empty while there is none.
    final class SinkSlot: Sendable {
        private let check = Mutex<SinkCheck?>(nil)

        func attach(_ check: @escaping SinkCheck) {
            self.check.withLock { $0 = check }
        }

        func stall() -> (reason: String, message: String)? {
            check.withLock { $0 }?()
        }
    }

    /// The verdict now: the collector's own first (Kafka, the spool), then the in-process sink's.
    func verdict() -> Verdict {
        let own = collectorVerdict()
        guard case .ready = own, let stall = sink.stall() else { return own }
        return .notReady(reason: .sinkStalled(stall.reason), message: stall.message)
    }

    private func collectorVerdict() -> Verdict {
        if kafkaMode == .none { return .ready(isSpooling: false) }
        let problem = producer?.connectionProblem
        if let problem, problem.isConnectionSettingsFault {
            let (reason, what): (Reason, String) =
                problem.isTLSFailure
                ? (.kafkaTLSFailed, "The TLS connection to Kafka failed")
                : (.kafkaAuthenticationFailed, "Kafka refused the SASL login")
            return .notReady(reason: reason, message: "\(what): \(problem.message)")
        }
        guard let spool else {
            return health.isUp
                ? .ready(isSpooling: false)
                : .notReady(
                    reason: .kafkaUnavailable,
                    message: "Kafka is not answering" + (problem.map { ": \($0.message)" } ?? "."))
        }
        let status = spool.status
        if let failure = status.failure {
            return .notReady(reason: .spoolWriteFailed, message: "The disk spool cannot be written: \(failure).")
        }
        if status.isFull {
            return .notReady(
                reason: .spoolFull,
                message: "The disk spool is full (\(status.bytes) of \(spool.configuration.maxBytes) bytes)"
                    + (health.isUp ? "." : " and Kafka is not answering."))
        }
        return .ready(isSpooling: status.records > 0)
    }

    /// The answer: 200 `{"status":"ready","spooling":false}`, or 503 `{"error":"unavailable","reason","message"}`
    /// with `Retry-After` (``IngestRejection/notReady(reason:message:)``).
    func response() -> HTTPResponse {
        switch verdict() {
        case .ready(let isSpooling):
            return .json(status: .ok, #"{"status":"ready","spooling":\#(isSpooling)}"#)
        case .notReady(let reason, let message):
            return IngestRejection.notReady(reason: reason.label, message: message).response
        }
    }
}
