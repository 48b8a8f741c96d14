import CRdKafka

// librdkafka calls these from the thread that polls the handle; the context arrives through the handle's opaque.

private func deliveryReportCallback(
    _ handle: OpaquePointer?,
    _ message: UnsafePointer<rd_kafka_message_t>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let message, let opaque else { return }
    // Borrowed, not retained, once per message: the handle holds its opaque, and the poll loop holds the handle.
    Unmanaged<ProducerEvents>.fromOpaque(opaque)._withUnsafeGuaranteedRef { $0.deliveryReported(message) }
}

private func errorCallback(
    _ handle: OpaquePointer?,
    _ code: Int32,
    _ reason: UnsafePointer<CChar>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let handle, let opaque else { return }
    let text = reason.map { String(cString: $0) } ?? ""
    Unmanaged<ProducerEvents>.fromOpaque(opaque).takeUnretainedValue()
        .errorReported(handle, code: rd_kafka_resp_err_t(rawValue: code), reason: text)
}

private func statisticsCallback(
    _ handle: OpaquePointer?,
    _ json: UnsafeMutablePointer<CChar>?,
    _ length: Int,
    _ opaque: UnsafeMutableRawPointer?
) -> Int32 {
    guard let json, let opaque else { return 0 }
    let text = String(
        decoding: UnsafeRawBufferPointer(start: json, count: length), as: UTF8.self)
    Unmanaged<ProducerEvents>.fromOpaque(opaque).takeUnretainedValue().statisticsReported(text)
    // 0: librdkafka frees the JSON buffer.
    return 0
}

private func consumerErrorCallback(
    _ handle: OpaquePointer?,
    _ code: Int32,
    _ reason: UnsafePointer<CChar>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let opaque else { return }
    let text = reason.map { String(cString: $0) } ?? ""
    Unmanaged<ConnectionWatch>.fromOpaque(opaque).takeUnretainedValue()
        .reported(RDKafkaError.make(rd_kafka_resp_err_t(rawValue: code), reason: text))
}

enum RDKafkaCallbacks {
    /// Points a producer configuration's callbacks at `events`, which must outlive the handle made from it.
    static func install(on configuration: OpaquePointer, events: ProducerEvents) {
        rd_kafka_conf_set_opaque(configuration, Unmanaged.passUnretained(events).toOpaque())
        rd_kafka_conf_set_dr_msg_cb(configuration, deliveryReportCallback)
        rd_kafka_conf_set_error_cb(configuration, errorCallback)
        rd_kafka_conf_set_stats_cb(configuration, statisticsCallback)
    }

    /// Points a consumer configuration's error callback at `connection`, which must outlive the handle made from it.
    /// Without an error callback librdkafka only logs the errors a consumer meets (a TLS handshake, a broker down).
    static func install(on configuration: OpaquePointer, connection: ConnectionWatch) {
        rd_kafka_conf_set_opaque(configuration, Unmanaged.passUnretained(connection).toOpaque())
        rd_kafka_conf_set_error_cb(configuration, consumerErrorCallback)
    }
}
