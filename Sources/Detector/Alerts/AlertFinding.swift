import FlowmeterModels
public import Rollups

/// A finding as an alert candidate: its identity labels, its words, and the finding itself.
///
/// The fingerprint hashes the identity labels (every label but `severity`), so the same series or type gives the
/// same fingerprint in every run and every process, and a rerun finds the alert it opened before.
public struct AlertFinding: Hashable, Sendable {
    /// Which finder produced it.
    public var kind: AlertState.Kind
    /// Alertmanager labels: `alertname`, `severity`, `app_id`, `kind`, `widget_type`, and `app_version` when the
    /// finding is about one version.
    public var labels: [String: String]
    /// One line for a human.
    public var summary: String
    /// The detail: versions, baseline, releases, the suspect deploy.
    public var description: String
    /// The measured value (a spike's ratio, an ungated type's events).
    public var value: Double
    /// The finding's CONTRACT §5 object.
    public var payload: JSONValue
    /// The stable identity; the key of `flowmeter.alerts.v1`.
    public var fingerprint: String

    /// Creates a candidate from labels; the fingerprint is computed from them.
    public init(
        kind: AlertState.Kind, labels: [String: String], summary: String, description: String, value: Double,
        payload: JSONValue
    ) {
        self.kind = kind
        self.labels = labels
        self.summary = summary
        self.description = description
        self.value = value
        self.payload = payload
        self.fingerprint = Self.fingerprint(of: labels)
    }

    /// A spike alert (`FlowmeterSpike`, severity `warning`).
    public init(spike: Spike) {
        var labels = [
            "alertname": "FlowmeterSpike", "severity": "warning", "app_id": spike.appID,
            "kind": spike.kind.rawValue, "widget_type": spike.widgetType,
        ]
        if let version = spike.appVersion { labels["app_version"] = version }
        let scope = spike.appVersion.map { "\(spike.appID) \($0)" } ?? spike.appID
        let type = spike.widgetType.isEmpty ? "(no type)" : spike.widgetType
        var description =
            "\(spike.count) events in the bucket at \(spike.peakWindowStart) against \(spike.baseline) expected; "
            + "onset \(spike.onset)."
        if let deploy = spike.suspectDeploy {
            description += " Suspect deploy \(deploy.service)@\(deploy.version), finished \(deploy.finishedAt)."
        }
        if !spike.backendReleases.isEmpty {
            description += " Releases: \(spike.backendReleases.joined(separator: ", "))."
        }
        self.init(
            kind: .spike, labels: labels,
            summary: "Spike of \(spike.kind.rawValue) for \(type) in \(scope): \(spike.ratio)× baseline",
            description: description, value: spike.ratio, payload: spike.jsonValue)
    }

    /// An ungated-type alert (`FlowmeterUngatedType`, severity `critical`: users see pages with missing widgets).
    public init(ungated: UngatedType) {
        let labels = [
            "alertname": "FlowmeterUngatedType", "severity": "critical", "app_id": ungated.appID,
            "kind": DiagnosticKind.unknownType.rawValue, "widget_type": ungated.widgetType,
        ]
        let versions = ungated.affectedVersions.map(\.appVersion).joined(separator: ", ")
        var description = "Affected versions: \(versions)."
        if let gate = ungated.suggestedMinAppVersion {
            description += " Gate it at minAppVersion \(gate)."
        } else {
            description += " No version renders it."
        }
        if let typo = ungated.likelyTypoOf { description += " Likely a typo of '\(typo)'." }
        if let deploy = ungated.suspectDeploy {
            description += " Suspect deploy \(deploy.service)@\(deploy.version), finished \(deploy.finishedAt)."
        }
        self.init(
            kind: .ungatedType, labels: labels,
            summary:
                "Release builds of \(ungated.appID) cannot render '\(ungated.widgetType)' "
                + "(\(ungated.events) events, \(ungated.installs) installs)",
            description: description, value: Double(ungated.events), payload: ungated.jsonValue)
    }

    /// A new-type alert (`FlowmeterNewType`, severity `info`).
    public init(newType: NewType) {
        let labels = [
            "alertname": "FlowmeterNewType", "severity": "info", "app_id": newType.appID,
            "kind": newType.kind.rawValue, "widget_type": newType.widgetType,
        ]
        self.init(
            kind: .newType, labels: labels,
            summary: "New widget type '\(newType.widgetType)' in release builds of \(newType.appID)",
            description: "First seen \(newType.firstSeen) as \(newType.kind.rawValue).", value: 1,
            payload: newType.jsonValue)
    }

    /// FNV-1a (64-bit) over the sorted identity labels, as 16 hex digits: stable across processes, unlike
    /// `Hasher`.
    static func fingerprint(of labels: [String: String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (name, value) in labels.sorted(by: { $0.key < $1.key }) where name != "severity" {
            for byte in name.utf8 + [0] + value.utf8 + [0] {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
