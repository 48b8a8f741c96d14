import FlowmeterModels
import FlowmeterWire
import HTTPServer
import Kafka

/// `GET /readyz`: whether this collector can take batches now, and if not, why.
///
/// Ready while a 202 is possible: Kafka answers, or the disk spool can hold what Kafka does not take. Not ready
/// (503, with a JSON `reason`) while the spool is full or its last write failed, or, without a spool, while Kafka
/// is down (``KafkaHealth``). Never ready while librdkafka reports that this collector's connection settings are
/// refused (a TLS handshake that failed, SASL credentials rejected): a spool would only fill until someone fixes them.
/// Always ready in `--kafka none` mode.
struct Readiness: Sendable {
    /// The verdict.
    enum Verdict: Sendable, Hashable {
        /// Batches can be taken; `isSpooling` while the spool holds records Kafka has not persisted yet.
        case ready(isSpooling: Bool)
        /// Batches get 503; `reason` is a stable word for machines, `message` a sentence for people.
        case notReady(reason: String, message: String)
    }

    let kafkaMode: CollectorConfiguration.KafkaMode
    let health: KafkaHealth
    let spool: Spool?
    /// The events producer, for the connection problem librdkafka reports; nil without Kafka.
    var producer: KafkaProducer?

    /// The verdict now.
    func verdict() -> Verdict {
        if kafkaMode == .none { return .ready(isSpooling: false) }
        let problem = producer?.connectionProblem
        if let problem, problem.isConnectionSettingsFault {
            let (reason, what) =
                problem.isTLSFailure
                ? ("kafka_tls_failed", "The TLS connection to Kafka failed")
                : ("kafka_authentication_failed", "Kafka refused the SASL login")
            return .notReady(reason: reason, message: "\(what): \(problem.message)")
        }
        guard let spool else {
            return health.isUp
                ? .ready(isSpooling: false)
                : .notReady(
                    reason: "kafka_unavailable",
                    message: "Kafka is not answering" + (problem.map { ": \($0.message)" } ?? "."))
        }
        let status = spool.status
        if let failure = status.failure {
            return .notReady(reason: "spool_write_failed", message: "The disk spool cannot be written: \(failure).")
        }
        if status.isFull {
            return .notReady(
                reason: "spool_full",
                message: "The disk spool is full (\(status.bytes) of \(spool.configuration.maxBytes) bytes)"
                    + (health.isUp ? "." : " and Kafka is not answering."))
        }
        return .ready(isSpooling: status.records > 0)
    }

    /// The answer: 200 `{"status":"ready","spooling":false}`, or 503 `{"error":"unavailable","reason","message"}`
    /// with `Retry-After`.
    func response() -> HTTPResponse {
        switch verdict() {
        case .ready(let isSpooling):
            return .json(status: .ok, #"{"status":"ready","spooling":\#(isSpooling)}"#)
        case .notReady(let reason, let message):
            var body: [UInt8] = Array(#"{"error":"unavailable","reason":"#.utf8)
            JSONString.append(reason, to: &body)
            body.append(contentsOf: #","message":"#.utf8)
            JSONString.append(message, to: &body)
            body.append(UInt8(ascii: "}"))
            return .json(status: .serviceUnavailable, body, headers: ["Retry-After": "5"])
        }
    }
}
