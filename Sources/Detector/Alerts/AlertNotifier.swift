/// Something that delivers alerts to people: Alertmanager, a chat hook, a test double.
public protocol AlertNotifier: Sendable {
    /// Delivers firing and resolved alerts; throws ``DetectorError`` (see `isRetriable`) when the receiver refuses
    /// or cannot be reached. Sending the same alerts again must be harmless.
    func send(_ alerts: [Alert]) async throws
}
