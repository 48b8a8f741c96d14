import CRdKafka

// The one place that turns librdkafka's error values into `KafkaError`.
enum RDKafkaError {
    static func make(
        _ error: rd_kafka_resp_err_t,
        persistence: KafkaPersistenceStatus? = nil,
        reason: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> KafkaError {
        let code = KafkaError.Code(error)
        let text = reason ?? String(cString: rd_kafka_err2str(error))
        let retriable: Bool
        switch persistence {
        case .persisted: retriable = false
        case .notPersisted, .possiblyPersisted: retriable = !code.isPermanent
        case nil: retriable = !code.isPermanent
        }
        return KafkaError(code, text, isRetriable: retriable, persistence: persistence, file: file, line: line)
    }

    /// Converts an `rd_kafka_error_t` and destroys it: the caller must not touch the pointer afterwards.
    static func consume(_ error: OpaquePointer, file: String = #fileID, line: UInt = #line) -> KafkaError {
        defer { rd_kafka_error_destroy(error) }
        let code = rd_kafka_error_code(error)
        let reason = String(cString: rd_kafka_error_string(error))
        var made = make(code, reason: reason, file: file, line: line)
        if rd_kafka_error_is_fatal(error) != 0 {
            // A fatal handle is replaced by the producer; the same message can then go to the new one.
            made = KafkaError(.fatal, reason, isRetriable: true, file: file, line: line)
        }
        return made
    }

    static func persistence(_ status: rd_kafka_msg_status_t) -> KafkaPersistenceStatus {
        switch status {
        case RD_KAFKA_MSG_STATUS_PERSISTED: .persisted
        case RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED: .possiblyPersisted
        default: .notPersisted
        }
    }

    /// Reads a NUL-terminated error buffer that librdkafka filled.
    static func string(from buffer: [CChar]) -> String {
        buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
