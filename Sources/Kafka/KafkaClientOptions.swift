/// librdkafka properties an operator passes through to every Kafka client a process makes: TLS, SASL, timeouts,
/// whatever managed Kafka asks for (`security.protocol=SASL_SSL`, `sasl.username`, `ssl.ca.location`, …).
///
/// They are applied after Flowmeter's own settings, so they can tune those (`message.timeout.ms`, `linger.ms`), except
/// the ``reservedKeys`` that Flowmeter's guarantees rest on. ``validated()`` asks librdkafka about every key before any
/// client is made, so a misspelled or wrongly valued property stops a process at start with a message naming it.
/// Values of ``isSecret(_:)`` keys never appear in what this type renders: its description and its errors redact them.
public struct KafkaClientOptions: Sendable, Hashable, CustomStringConvertible {
    /// The properties by librdkafka key.
    public private(set) var properties: [String: String]

    /// Options holding `properties` (not validated yet).
    public init(_ properties: [String: String] = [:]) {
        self.properties = properties
    }

    /// Whether no property is set.
    public var isEmpty: Bool { properties.isEmpty }

    /// Sets `key` to `value`, replacing an earlier value of the same key.
    public mutating func set(_ key: String, to value: String) {
        properties[key] = value
    }

    /// The keys Flowmeter sets itself, each with what to use instead: a pass-through value would break a guarantee
    /// (an idempotent producer that acknowledges every write, offsets that live in the store) or fight an option.
    public static let reservedKeys: [String: String] = [
        "bootstrap.servers": "set the brokers with --kafka",
        "metadata.broker.list": "set the brokers with --kafka",
        "group.id": "set the consumer group with --group",
        "enable.idempotence": "the collector's producer is always idempotent (docs/reliability.md)",
        "acks": "every write is acknowledged by all in-sync replicas (acks=all) before a 202",
        "enable.auto.commit": "the sink commits offsets in the store, in the same transaction as the rollups",
        "enable.auto.offset.store": "the sink commits offsets in the store, in the same transaction as the rollups",
    ]

    /// Whether `key` names a secret (a password, a private key, a token): its value is never logged, printed or put
    /// in an error. Matches any key containing `password`, `secret`, `token`, `key.pem` or `jaas`, and
    /// `sasl.oauthbearer.config`, the set librdkafka itself treats as sensitive and more.
    public static func isSecret(_ key: String) -> Bool {
        let lowered = key.lowercased()
        return ["password", "secret", "token", "key.pem", "jaas", "sasl.oauthbearer.config"].contains {
            lowered.contains($0)
        }
    }

    /// `value` as it may be shown for `key`: itself, or `[redacted]` for a secret.
    public static func printable(_ value: String, for key: String) -> String {
        isSecret(key) ? "[redacted]" : value
    }

    /// The properties sorted by key, secrets redacted: `security.protocol=SASL_SSL, sasl.password=[redacted]`.
    public var description: String {
        properties.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.printable($0.value, for: $0.key))" }
            .joined(separator: ", ")
    }

    /// These options after librdkafka has accepted every one of them; throws ``KafkaError/Code/invalidArgument``
    /// naming the first key that is reserved, unknown (with the nearest known key when one is close) or given a
    /// value librdkafka refuses. No client is made and nothing is connected.
    public func validated() throws(KafkaError) -> KafkaClientOptions {
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            if let instead = Self.reservedKeys[key] {
                throw KafkaError(
                    .invalidArgument, "Kafka property '\(key)' is set by Flowmeter itself: \(instead)",
                    isRetriable: false)
            }
            switch RDKafkaProperties.verdict(key: key, value: value) {
            case .accepted:
                continue
            case .unknown:
                let hint = Self.nearestKnownKey(to: key).map { " (did you mean '\($0)'?)" } ?? ""
                throw KafkaError(
                    .invalidArgument, "unknown Kafka property '\(key)'\(hint): see librdkafka's CONFIGURATION.md",
                    isRetriable: false)
            case .invalid(let message):
                throw KafkaError(
                    .invalidArgument,
                    "invalid value for Kafka property '\(key)': \(Self.redacting(value, in: message, for: key))",
                    isRetriable: false)
            }
        }
        return self
    }

    /// The known property closest to a misspelled `key`, within a few edits; nil when none is close.
    static func nearestKnownKey(to key: String) -> String? {
        let lowered = key.lowercased()
        if RDKafkaProperties.names.contains(lowered) { return lowered }
        let limit = max(2, lowered.count / 5)
        var best: (name: String, distance: Int)?
        for name in RDKafkaProperties.names where abs(name.count - lowered.count) <= limit {
            let distance = editDistance(Array(lowered.utf8), Array(name.utf8))
            if distance <= limit, distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
    }

    /// `message` with every occurrence of a secret `value` replaced, so a librdkafka message quoting it is safe.
    static func redacting(_ value: String, in message: String, for key: String) -> String {
        guard isSecret(key), !value.isEmpty else { return message }
        return message.replacing(value, with: "[redacted]")
    }

    // Levenshtein distance over bytes, two rows.
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...max(1, b.count) where j <= b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
