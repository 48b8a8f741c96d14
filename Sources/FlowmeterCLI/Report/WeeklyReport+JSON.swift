public import Detector
import FlowmeterModels
import Rollups

extension WeeklyReport: JSONRepresentable {
    /// The report as JSON, keys in the order docs/report.md documents, absent values as `null`.
    ///
    /// Ungated findings, new types, spikes and suspect deploys keep the shapes of docs/api.md#query-output and
    /// docs/detector.md.
    public var jsonValue: JSONValue {
        guard case .object(let fields) = reportFields else { return reportFields }
        let manifests = JSONValue.object([
            ("checked", .integer(Int64(manifestsChecked))), ("drift", .array(manifestDrift.map(\.jsonValue))),
        ])
        let canary = JSONValue.array(
            self.canary.map { finding in
                guard case .object(let fields) = MatrixCommand.findingJSON(finding) else {
                    return MatrixCommand.findingJSON(finding)
                }
                let rates = canaryRates[finding]
                return .object(
                    fields + [
                        ("raisingPerThousandDecodes", rates?.raising.map(JSONValue.number) ?? .null),
                        ("quietPerThousandDecodes", rates?.quiet.map(JSONValue.number) ?? .null),
                    ])
            })
        let approvals = JSONValue.array(
            expiringApprovals.map { approval in
                .object([
                    ("widgetType", .string(approval.widgetType)),
                    ("kind", approval.kind.map(JSONValue.string) ?? .null),
                    ("appID", approval.appID.map(JSONValue.string) ?? .null),
                    ("key", approval.key.map(JSONValue.string) ?? .null), ("owner", .string(approval.owner)),
                    ("reason", .string(approval.reason)), ("expires", .string(approval.expires)),
                    ("expired", .bool(approval.isExpired)),
                ])
            })
        return .object(fields + [("manifests", manifests), ("canary", canary), ("approvalsExpiring", approvals)])
    }

    private var reportFields: JSONValue {
        .object([
            ("week", .string(week.description)),
            ("from", .string(current.from.rfc3339String)),
            ("to", .string(current.to.rfc3339String)),
            ("previousFrom", .string(previous.from.rfc3339String)),
            ("appID", appID.map(JSONValue.string) ?? .null),
            ("generatedAt", .string(generatedAt.rfc3339String)),
            ("summary", .object([("current", Self.json(current)), ("previous", Self.json(previous))])),
            ("actions", .array(actions.map(Self.json))),
            ("ungated", .array(ungated.map(Self.json))),
            ("newTypes", .array(newTypes.map(\.jsonValue))),
            ("malformed", .array(malformed.map(Self.json))),
            ("duplicates", .array(duplicates.map(Self.json))),
            ("versions", .array(versions.map(Self.json))),
            (
                "unknownByDay",
                .object([
                    ("days", .array(unknownByDay.days.map { .string($0.rfc3339String) })),
                    (
                        "types",
                        .array(
                            unknownByDay.types.map { type in
                                .object([
                                    ("appID", type.appID.map(JSONValue.string) ?? .null),
                                    ("widgetType", type.widgetType.map(JSONValue.string) ?? .null),
                                    ("events", .array(type.events.map(JSONValue.integer))),
                                ])
                            })
                    ),
                ])
            ),
            ("deploys", .array(deploys.map(Self.json))),
            ("spikes", .array(spikes.map(\.jsonValue))),
            ("incidents", .array(incidents.map(\.jsonValue))),
            ("gates", .array(gates.map(\.jsonValue))),
        ])
    }

    private static func rate(_ value: Double?) -> JSONValue {
        value.map { .number(ReportFormatting.rounded($0)) } ?? .null
    }

    private static func json(_ summary: Summary) -> JSONValue {
        let kinds = summary.kinds(alongside: summary)
        return .object([
            ("events", .integer(summary.totalEvents)),
            ("eventsByKind", .object(kinds.map { ($0, .integer(summary.eventsByKind[$0] ?? 0)) })),
            ("installsAffected", .integer(summary.installsAffected)),
            ("installs", .integer(summary.installs)),
            ("batches", .integer(summary.batches)),
            ("cleanBatches", .integer(summary.cleanBatches)),
            ("decodeCleanRate", rate(summary.decodeCleanRate)),
            ("ungatedTypes", .integer(Int64(summary.ungatedTypes))),
        ])
    }

    private static func json(_ action: Action) -> JSONValue {
        .object([
            ("kind", .string(action.kind.rawValue)),
            ("appID", .string(action.appID)),
            ("widgetType", .string(action.widgetType)),
            ("events", .integer(action.events)),
            ("text", .string(action.text)),
            ("team", action.team.map(JSONValue.string) ?? .null),
        ])
    }

    private static func json(_ change: UngatedChange) -> JSONValue {
        .object([
            ("status", .string(change.status.rawValue)),
            ("events", .integer(change.events)),
            ("previousEvents", .integer(change.previousEvents)),
            ("finding", change.finding.jsonValue),
        ])
    }

    private static func json(_ group: MalformedGroup) -> JSONValue {
        .object([
            ("appID", .string(group.appID)),
            ("widgetType", .string(group.widgetType)),
            ("events", .integer(group.events)),
            ("installs", .integer(group.installs)),
            ("appVersions", .array(group.appVersions.map(JSONValue.string))),
            ("missingKeys", .array(group.missingKeys.map(JSONValue.string))),
            (
                "paths",
                .array(
                    group.paths.map { path in
                        .object([
                            ("codingPath", .string(path.codingPath)),
                            ("events", .integer(path.events)),
                            ("messages", .array(path.messages.map(JSONValue.string))),
                            ("missingKeys", .array(path.missingKeys.map(JSONValue.string))),
                        ])
                    })
            ),
        ])
    }

    private static func json(_ page: DuplicatePage) -> JSONValue {
        .object([
            ("appID", .string(page.appID)),
            ("pageID", page.pageID.map(JSONValue.string) ?? .null),
            ("events", .integer(page.events)),
            ("widgetTypes", .array(page.widgetTypes.map(JSONValue.string))),
            ("messages", .array(page.messages.map(JSONValue.string))),
        ])
    }

    private static func json(_ version: VersionHealth) -> JSONValue {
        .object([
            ("appID", .string(version.appID)),
            ("appVersion", .string(version.appVersion)),
            ("installs", .integer(version.installs)),
            ("previousInstalls", .integer(version.previousInstalls)),
            ("adoption", .number(ReportFormatting.rounded(version.adoption))),
            ("batches", .integer(version.batches)),
            ("cleanBatches", .integer(version.cleanBatches)),
            ("decodeCleanRate", rate(version.decodeCleanRate)),
            ("events", .integer(version.events)),
            ("clientDiscarded", .integer(version.clientDiscarded)),
            ("onDeviceLoss", rate(version.onDeviceLoss)),
        ])
    }

    private static func json(_ impact: DeployImpact) -> JSONValue {
        let deploy = impact.deploy
        return .object([
            ("id", .string(deploy.id)),
            ("service", .string(deploy.service)),
            ("version", .string(deploy.version)),
            ("environment", deploy.environment.map(JSONValue.string) ?? .null),
            ("startedAt", deploy.startedAt.map { .string($0.rfc3339String) } ?? .null),
            ("finishedAt", .string(deploy.finishedAt.rfc3339String)),
            ("commit", deploy.commit.map(JSONValue.string) ?? .null),
            ("url", deploy.url.map(JSONValue.string) ?? .null),
            ("spikes", .array(impact.spikes.map(\.jsonValue))),
            ("ungatedTypes", .array(impact.ungatedTypes.map { .string($0.widgetType) })),
            ("incidents", .array(impact.incidents.map(\.jsonValue))),
        ])
    }
}
