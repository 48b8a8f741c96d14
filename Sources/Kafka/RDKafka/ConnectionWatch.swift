import Synchronization

/// Why a client cannot reach its brokers now, from the errors librdkafka reports on its own: a TLS handshake that
/// failed, SASL credentials refused, connections that drop, every broker down.
///
/// A configuration fault (`_SSL`, `_AUTHENTICATION`) outranks the transport errors that follow it, so the reason
/// kept is the one an operator can act on. It is cleared by any sign that a broker answers: a message delivered or
/// fetched, or statistics that list a broker as up. Safe from any thread; the clear on the hot path is one atomic
/// load while there is nothing to clear.
final class ConnectionWatch: Sendable {
    private let problem = Mutex<KafkaError?>(nil)
    private let hasProblem = Atomic<Bool>(false)
    private let onChange: (@Sendable (KafkaError?) -> Void)?

    /// A watch that calls `onChange` (on librdkafka's thread, outside any lock) when a problem begins, when its code
    /// changes, and with nil when it is over; not for every repeat of the same error at each reconnect.
    init(onChange: (@Sendable (KafkaError?) -> Void)? = nil) {
        self.onChange = onChange
    }

    /// The codes that say the brokers cannot be reached, as opposed to a message or topic at fault.
    static let connectionCodes: Set<KafkaError.Code> = [.ssl, .authentication, .transport, .allBrokersDown]

    /// The current problem, or nil while the brokers answer (or nothing has been tried yet).
    var current: KafkaError? { hasProblem.load(ordering: .acquiring) ? problem.withLock { $0 } : nil }

    /// Notes an error librdkafka reported; errors of other codes are ignored.
    func reported(_ error: KafkaError) {
        guard Self.connectionCodes.contains(error.code) else { return }
        let isNews = problem.withLock { current in
            if let kept = current, kept.isConnectionSettingsFault, !error.isConnectionSettingsFault { return false }
            let isNews = current?.code != error.code || current?.isTLSFailure != error.isTLSFailure
            current = error
            hasProblem.store(true, ordering: .releasing)
            return isNews
        }
        if isNews { onChange?(error) }
    }

    /// A broker answered: the problem, if any, is over.
    func answered() {
        guard hasProblem.load(ordering: .relaxed) else { return }
        let wasProblem = problem.withLock { current in
            defer { current = nil }
            hasProblem.store(false, ordering: .releasing)
            return current != nil
        }
        if wasProblem { onChange?(nil) }
    }

    /// Statistics arrived: a broker listed as `UP` is an answer.
    func statisticsReported(_ json: String) {
        guard hasProblem.load(ordering: .relaxed), json.contains(#""state":"UP""#) else { return }
        answered()
    }
}

extension KafkaError {
    /// Whether the error says the client's own connection settings are wrong (TLS, SASL), not that brokers are away:
    /// a failed TLS handshake (`_SSL`), a refused SASL login (`_AUTHENTICATION`), or a connection the broker ended
    /// with a TLS alert (`_TRANSPORT` quoting OpenSSL's `SSL alert number`, such as TLS 1.3's `certificate required`
    /// to a client without a certificate, which arrives after the client's side of the handshake is done).
    public var isConnectionSettingsFault: Bool {
        code == .ssl || code == .authentication || isTLSAlert
    }

    /// Whether the error is a TLS failure: `_SSL`, or a connection ended by the broker's TLS alert.
    public var isTLSFailure: Bool { code == .ssl || isTLSAlert }

    private var isTLSAlert: Bool {
        // A close_notify alert is a normal end of a connection, not a refusal.
        code == .transport && message.contains("SSL alert number") && !message.contains("close notify")
    }
}
