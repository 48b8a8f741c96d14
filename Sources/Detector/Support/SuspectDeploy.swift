public import FlowmeterModels

/// The backend deploy a finding is attributed to, as docs/api.md#query-output's `suspectDeploy` object.
public struct SuspectDeploy: Hashable, Sendable, JSONRepresentable {
    /// How the deploy was chosen.
    public enum Evidence: String, Hashable, Sendable {
        /// The earliest events carried this deploy's `service@version` as their `backendRelease`.
        case backendRelease
        /// No release matched; this deploy finished closest before the finding, within the deploy window.
        case timing
    }

    /// The deployed service.
    public var service: String
    /// The deployed version.
    public var version: String
    /// When the deploy finished.
    public var finishedAt: Timestamp
    /// Seconds from `finishedAt` to the finding's first event (or spike onset); negative when the events carrying
    /// its release came before the deploy marker says it finished (a canary, or a late marker).
    public var lagSeconds: Int64
    /// How the deploy was chosen; not part of the contract JSON.
    public var evidence: Evidence

    /// Creates an attribution.
    public init(service: String, version: String, finishedAt: Timestamp, lagSeconds: Int64, evidence: Evidence) {
        self.service = service
        self.version = version
        self.finishedAt = finishedAt
        self.lagSeconds = lagSeconds
        self.evidence = evidence
    }

    /// `{"service", "version", "finishedAt", "lagSeconds"}`.
    public var jsonValue: JSONValue {
        .object([
            ("service", .string(service)),
            ("version", .string(version)),
            ("finishedAt", .string(finishedAt.rfc3339String)),
            ("lagSeconds", .integer(lagSeconds)),
        ])
    }
}
