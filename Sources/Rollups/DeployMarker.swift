public import FlowmeterModels
import Foundation

/// A backend deploy, as `POST /v1/deploys` and `flowmeter deploys add` record it (docs/api.md#deploy-markers).
///
/// JSON: `{"service", "version", "environment", "startedAt", "finishedAt", "commit", "url", "id"}`; `service`,
/// `version` and `finishedAt` are required, times are RFC 3339. A marker decoded without an `id` gets a fresh random
/// one, which is what the 201 answer returns.
public struct DeployMarker: Hashable, Sendable, Codable {
    /// The marker's id, unique per deploy; recording the same id again replaces the marker.
    public var id: String
    /// The deployed service, for example `page-api`.
    public var service: String
    /// The deployed version, for example `2026.11.30-2`.
    public var version: String
    /// The environment, for example `production`.
    public var environment: String?
    /// When the deploy started.
    public var startedAt: Timestamp?
    /// When the deploy finished; required.
    public var finishedAt: Timestamp
    /// The deployed commit.
    public var commit: String?
    /// A link to the build or pipeline.
    public var url: String?

    /// Creates a marker; `id` defaults to a fresh random one.
    public init(
        id: String = DeployMarker.makeID(), service: String, version: String, environment: String? = nil,
        startedAt: Timestamp? = nil, finishedAt: Timestamp, commit: String? = nil, url: String? = nil
    ) {
        self.id = id
        self.service = service
        self.version = version
        self.environment = environment
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.commit = commit
        self.url = url
    }

    /// The release as events carry it in `backendRelease`: `service@version`.
    public var release: String { "\(service)@\(version)" }

    /// A fresh random marker id (a lowercase UUID).
    public static func makeID() -> String {
        UUID().uuidString.lowercased()
    }

    enum CodingKeys: String, CodingKey {
        case id, service, version, environment, startedAt, finishedAt, commit, url
    }

    private static let checksIdentifiers = CodingUserInfoKey(rawValue: "flowmeter.checksIdentifiers")!

    /// Decodes a marker; a missing or empty `service` or `version`, a missing `finishedAt`, a wrong type or a bad
    /// time is an error whose description names the key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Identifiers follow the ingest rule (IdentifierRule) unless the decoder is told not to check; `url` is free
        // text.
        let checks = decoder.userInfo[Self.checksIdentifiers] as? Bool ?? true
        func identifier(_ key: CodingKeys) throws -> String? {
            guard let value = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            if checks, let violation = IdentifierRule.violation(in: value) {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: violation.message(key: key.stringValue))
            }
            return value
        }
        func required(_ key: CodingKeys) throws -> String {
            guard container.contains(key) else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: container.codingPath, debugDescription: "Missing key '\(key.stringValue)'"))
            }
            guard let value = try identifier(key) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: IdentifierRule.Violation.blank.message(key: key.stringValue))
            }
            return value
        }
        let service = try required(.service)
        let version = try required(.version)
        guard container.contains(.finishedAt) else {
            throw DecodingError.keyNotFound(
                CodingKeys.finishedAt,
                .init(codingPath: container.codingPath, debugDescription: "Missing key 'finishedAt'"))
        }
        self.init(
            id: try identifier(.id) ?? Self.makeID(),
            service: service, version: version,
            environment: try identifier(.environment),
            startedAt: try container.decodeIfPresent(Timestamp.self, forKey: .startedAt),
            finishedAt: try container.decode(Timestamp.self, forKey: .finishedAt),
            commit: try identifier(.commit),
            url: try container.decodeIfPresent(String.self, forKey: .url))
    }

    /// Decodes a marker from JSON bytes (a `POST /v1/deploys` body or a `flowmeter.deploys.v1` value); throws
    /// ``RollupsError`` (`invalidDeployMarker`) whose message says what is wrong, such as `Missing key 'finishedAt'`.
    ///
    /// - Parameter checkingIdentifiers: hold `service`, `version` and the other identifiers to ``IdentifierRule``
    ///   (the default, for what arrives from outside); false reads a marker as it was stored.
    public init(jsonBytes bytes: some Collection<UInt8>, checkingIdentifiers: Bool = true) throws(RollupsError) {
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[Self.checksIdentifiers] = checkingIdentifiers
            self = try decoder.decode(DeployMarker.self, from: Data(bytes))
        } catch let error as DecodingError {
            let message: String
            switch error {
            case .keyNotFound(let key, _): message = "Missing key '\(key.stringValue)'"
            default: message = error.summary
            }
            throw RollupsError(.invalidDeployMarker, message)
        } catch {
            throw RollupsError(.invalidDeployMarker, "Invalid deploy marker: \(error)")
        }
    }

    /// The marker as JSON (keys sorted, absent optionals left out), as published to `flowmeter.deploys.v1`.
    public func jsonBytes() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try! encoder.encode(self))
    }
}
