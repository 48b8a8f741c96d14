import FlowmeterModels
public import Rollups

/// A finding as an alert candidate: its identity labels, its words, and the finding itself.
///
/// The fingerprint hashes the identity labels (every label but `severity` and `team`), so the same incident or type
/// gives the same fingerprint in every run and every process, and a rerun finds the alert it opened before; a change
/// of owners re-routes an open alert without opening a second one.
public struct AlertFinding: Hashable, Sendable {
    /// Which finder produced it.
    public var kind: AlertState.Kind
    /// Alertmanager labels: `alertname`, `severity`, `app_id`, `kind`, `widget_type`, `app_version` when the
    /// finding is about one version, and `team` when an owners file names one.
    public var labels: [String: String]
    /// One line for a human.
    public var summary: String
    /// The detail: versions, baseline, releases, the suspect deploy.
    public var description: String
    /// The measured value (a spike's ratio, an ungated type's events).
    public var value: Double
    /// The finding's docs/api.md#query-output object.
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

    /// An incident alert (`FlowmeterSpike`, severity `warning`): one per incident however many versions it hit, so
    /// the labels carry no `app_version`.
    public init(incident: Incident, team: String? = nil) {
        var labels = [
            "alertname": "FlowmeterSpike", "severity": "warning", "app_id": incident.appID,
            "kind": incident.kind.rawValue, "widget_type": incident.widgetType,
        ]
        if let team { labels["team"] = team }
        let type = incident.widgetType.isEmpty ? "(no type)" : incident.widgetType
        let versions = incident.versions.map(\.appVersion)
        let scope =
            versions.isEmpty
            ? incident.appID
            : "\(incident.appID) on \(versions.count) \(versions.count == 1 ? "version" : "versions")"
        var description =
            "\(incident.count) events in the bucket at \(incident.peakWindowStart) against \(incident.baseline) "
            + "expected; onset \(incident.onset)."
        if !versions.isEmpty {
            description +=
                " Versions: "
                + incident.versions.map { "\($0.appVersion) (\($0.count))" }
                .joined(separator: ", ") + "."
        }
        if let deploy = incident.suspectDeploy {
            description += " Suspect deploy \(deploy.service)@\(deploy.version), finished \(deploy.finishedAt)."
        }
        if !incident.backendReleases.isEmpty {
            description += " Releases: \(incident.backendReleases.joined(separator: ", "))."
        }
        self.init(
            kind: .spike, labels: labels,
            summary: "Incident: \(incident.kind.rawValue) for \(type) in \(scope), \(incident.ratio)× baseline",
            description: description, value: incident.ratio, payload: incident.jsonValue)
    }

    /// A spike alert (`FlowmeterSpike`, severity `warning`) for one series; the detector alerts per incident
    /// (``init(incident:team:)``).
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
    ///
    /// A regressed type says so in its summary and names when it was last seen before the quiet stretch.
    public init(ungated: UngatedType, team: String? = nil) {
        var labels = [
            "alertname": "FlowmeterUngatedType", "severity": "critical", "app_id": ungated.appID,
            "kind": DiagnosticKind.unknownType.rawValue, "widget_type": ungated.widgetType,
        ]
        if let team { labels["team"] = team }
        let versions = ungated.affectedVersions.map(\.appVersion).joined(separator: ", ")
        var description = "Affected versions: \(versions)."
        if ungated.status == .regressed {
            description =
                "Regressed: it had stopped"
                + (ungated.lastSeenBefore.map { " (last seen \($0))" } ?? "")
                + " and is back. " + description
        }
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
            summary: (ungated.status == .regressed ? "Regressed: release" : "Release")
                + " builds of \(ungated.appID) cannot render '\(ungated.widgetType)' "
                + (ungated.status == .regressed ? "again " : "")
                + "(\(ungated.events) events, \(ungated.installs) installs)",
            description: description, value: Double(ungated.events), payload: ungated.jsonValue)
    }

    /// A new-type alert (`FlowmeterNewType`, severity `info`).
    public init(newType: NewType, team: String? = nil) {
        var labels = [
            "alertname": "FlowmeterNewType", "severity": "info", "app_id": newType.appID,
            "kind": newType.kind.rawValue, "widget_type": newType.widgetType,
        ]
        if let team { labels["team"] = team }
        self.init(
            kind: .newType, labels: labels,
            summary: "New widget type '\(newType.widgetType)' in release builds of \(newType.appID)",
            description: "First seen \(newType.firstSeen) as \(newType.kind.rawValue).", value: 1,
            payload: newType.jsonValue)
    }

    /// FNV-1a (64-bit) over the sorted identity labels (all but `severity` and `team`), as 16 hex digits: stable
    /// across processes, unlike `Hasher`.
    static func fingerprint(of labels: [String: String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (name, value) in labels.sorted(by: { $0.key < $1.key }) where name != "severity" && name != "team" {
            for byte in name.utf8 + [0] + value.utf8 + [0] {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
