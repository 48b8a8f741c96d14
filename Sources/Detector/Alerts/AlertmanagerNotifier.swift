public import FlowmeterModels
public import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Posts alerts to Alertmanager's v2 API (`POST /api/v2/alerts`).
///
/// Each alert goes as `{"labels", "annotations", "startsAt", "endsAt", "generatorURL"}`. A firing alert's `endsAt`
/// is `firingTTL` after the send, so Alertmanager resolves it by itself if the detector stops re-sending (as
/// Prometheus does); a resolved alert's `endsAt` is when it resolved, which Alertmanager shows as resolved at once.
/// Alertmanager identifies alerts by their labels, so re-sending is idempotent.
public struct AlertmanagerNotifier: AlertNotifier {
    /// Alertmanager's base URL, for example `http://alertmanager:9093`.
    public let baseURL: URL
    /// How long a firing alert stays firing in Alertmanager without being re-sent.
    public let firingTTL: Duration
    /// The longest a send may take.
    public let timeout: Duration
    /// A link back to the detector, shown by Alertmanager.
    public let generatorURL: String?
    private let session: URLSession

    /// Creates a notifier for the Alertmanager at `baseURL`.
    public init(
        baseURL: URL, firingTTL: Duration = .seconds(300), timeout: Duration = .seconds(10),
        generatorURL: String? = nil
    ) {
        self.baseURL = baseURL
        self.firingTTL = firingTTL
        self.timeout = timeout
        self.generatorURL = generatorURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.seconds(timeout)
        configuration.timeoutIntervalForResource = Self.seconds(timeout)
        session = URLSession(configuration: configuration)
    }

    /// Posts `alerts` in one request; an empty list sends nothing.
    public func send(_ alerts: [Alert]) async throws {
        guard !alerts.isEmpty else { return }
        let body = Self.body(for: alerts, now: Timestamp(Date()), firingTTL: firingTTL, generatorURL: generatorURL)
        var request = URLRequest(url: baseURL.appendingPathComponent("api/v2/alerts"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.serialized().utf8)
        request.timeoutInterval = Self.seconds(timeout)
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw DetectorError(.transport, "Alertmanager at \(baseURL) unreachable: \(error)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw DetectorError(.transport, "Alertmanager at \(baseURL) sent no HTTP answer")
        }
        guard (200..<300).contains(http.statusCode) else {
            throw DetectorError(
                .rejected, "Alertmanager refused the alerts: \(String(decoding: data.prefix(512), as: UTF8.self))",
                httpStatus: http.statusCode)
        }
    }

    /// The request body for `alerts`, as sent at `now`; exposed for tests that pin it.
    public static func body(for alerts: [Alert], now: Timestamp, firingTTL: Duration, generatorURL: String?)
        -> JSONValue
    {
        let firingEnd = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch + firingTTL.components.seconds)
        return .array(
            alerts.map { alert in
                var members: [(key: String, value: JSONValue)] = [
                    ("labels", .object(alert.labels.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
                    (
                        "annotations",
                        .object(alert.annotations.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
                    ),
                    ("startsAt", .string(alert.startsAt.rfc3339String)),
                    ("endsAt", .string((alert.status == .resolved ? alert.endsAt ?? now : firingEnd).rfc3339String)),
                ]
                if let generatorURL { members.append(("generatorURL", .string(generatorURL))) }
                return .object(members)
            })
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
