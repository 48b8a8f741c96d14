import FlowmeterModels
import Foundation

/// Known and accepted `flowmeter check` findings (`--approvals FILE`): each with a reason, an owner and an expiry
/// date, after which the finding fails the check again.
///
/// The file is JSON: `{"approvals": [{"widgetType": "hologram_projector", "kind": "unknownType",
/// "appID": "com.example.shop", "key": null, "payload": null, "reason": "…", "owner": "team-pages",
/// "expires": "2026-12-31"}]}`. `widgetType`, `reason`, `owner` and `expires` are required; `kind`, `appID`, `key` and
/// `payload` narrow what it covers (absent: any). `expires` is a date (valid through that day, UTC) or an RFC 3339
/// time.
struct CheckApprovals: Sendable {
    /// One accepted finding.
    struct Approval: Sendable, Hashable {
        var widgetType: String
        var kind: String?
        var appID: String?
        var key: String?
        var payload: String?
        var reason: String
        var owner: String
        /// The first instant it no longer holds.
        var expiresAt: Timestamp
        /// `expires` as written.
        var expires: String

        /// Whether it covers `finding`.
        func covers(_ finding: CheckFinding) -> Bool {
            widgetType == finding.widgetType && (kind == nil || kind == finding.ruleID)
                && (appID == nil || appID == finding.appID) && (key == nil || key == finding.key)
                && (payload == nil || payload == finding.payload || payload == finding.uri)
        }
    }

    var approvals: [Approval]

    /// No approvals.
    init(approvals: [Approval] = []) {
        self.approvals = approvals
    }

    /// Reads the file at `path`; throws ``CommandError`` naming what is wrong.
    init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError(.unreadableInput, "cannot read approvals '\(path)'")
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = root["approvals"] as? [[String: Any]]
        else {
            throw CommandError(.unreadableInput, "approvals '\(path)' is not {\"approvals\": [ … ]}")
        }
        approvals = try list.enumerated().map { index, entry in
            func required(_ name: String) throws -> String {
                guard let value = entry[name] as? String, !value.isEmpty else {
                    throw CommandError(.unreadableInput, "approvals '\(path)': entry \(index) needs '\(name)'")
                }
                return value
            }
            let expires = try required("expires")
            guard let expiresAt = Self.expiry(expires) else {
                throw CommandError(
                    .unreadableInput,
                    "approvals '\(path)': entry \(index) expires '\(expires)' is not a date (2026-12-31) or RFC 3339 time"
                )
            }
            return Approval(
                widgetType: try required("widgetType"), kind: entry["kind"] as? String,
                appID: entry["appID"] as? String, key: entry["key"] as? String, payload: entry["payload"] as? String,
                reason: try required("reason"), owner: try required("owner"), expiresAt: expiresAt, expires: expires)
        }
    }

    /// The end of a `YYYY-MM-DD` day (UTC), or an RFC 3339 time.
    static func expiry(_ text: String) -> Timestamp? {
        if let time = Timestamp(rfc3339: text) { return time }
        guard let day = Timestamp(rfc3339: text + "T00:00:00Z") else { return nil }
        return Timestamp(secondsSinceEpoch: day.secondsSinceEpoch + 86_400)
    }

    /// `findings` with approvals applied at `now`: a failing finding that a valid approval covers becomes a note; one
    /// whose approval expired keeps failing, saying so.
    func apply(to findings: [CheckFinding], now: Timestamp) -> [CheckFinding] {
        findings.map { finding in
            guard finding.level != .note, let approval = approvals.first(where: { $0.covers(finding) }) else {
                return finding
            }
            var approved = finding
            approved.approval = approval
            if now < approval.expiresAt {
                approved.level = .note
                approved.message += " Approved by \(approval.owner) until \(approval.expires): \(approval.reason)"
            } else {
                approved.approvalExpired = true
                approved.message += " The approval by \(approval.owner) expired on \(approval.expires)."
            }
            return approved
        }
    }

    /// The approvals that expire within `days` days of `now` (or have expired), soonest first.
    func expiring(within days: Int, now: Timestamp) -> [Approval] {
        let horizon = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch + Int64(days) * 86_400)
        return approvals.filter { $0.expiresAt <= horizon }.sorted { $0.expiresAt < $1.expiresAt }
    }
}
