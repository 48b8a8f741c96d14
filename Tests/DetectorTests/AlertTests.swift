import Detector
import FlowmeterModels
import Foundation
import Rollups
import TestSupport
import Testing

@Suite struct AlertTests {
    func spike(version: String? = "5.2.1", ratio: Double = 24) -> Spike {
        Spike(
            appID: "com.example.shop", kind: .unknownType, widgetType: "hologram_projector", appVersion: version,
            onset: History.time("2026-11-30T08:45:00Z"), peakWindowStart: History.time("2026-11-30T08:50:00Z"),
            end: History.time("2026-11-30T09:00:00Z"), count: 240, baseline: 10, ratio: ratio, isNormalized: true,
            suspectDeploy: nil, backendReleases: ["page-api@2"])
    }

    @Test func alertOpensStaysOpenThenResolves() throws {
        let store = InMemoryRollupStore()
        let evaluator = AlertEvaluator(store: store)
        let first = History.time("2026-11-30T09:00:00Z")

        let opened = try evaluator.evaluate([AlertFinding(spike: spike())], at: first)
        #expect(opened.opened.count == 1)
        #expect(opened.messages.count == 1)
        #expect(try store.openAlerts().count == 1)

        // A later run with a changed ratio keeps the same alert: the fingerprint ignores values.
        let again = try evaluator.evaluate([AlertFinding(spike: spike(ratio: 30))], at: first.adding(minutes: 1))
        #expect(again.opened.isEmpty)
        #expect(again.continuing.map(\.fingerprint) == opened.opened.map(\.fingerprint))
        #expect(again.continuing.first?.startsAt == first)
        #expect(again.messages.isEmpty)

        let resolvedAt = first.adding(minutes: 2)
        let resolved = try evaluator.evaluate([], at: resolvedAt)
        let alert = try #require(resolved.resolved.first)
        #expect(alert.status == .resolved)
        #expect(alert.endsAt == resolvedAt)
        #expect(alert.labels["app_version"] == "5.2.1")
        #expect(try store.openAlerts().isEmpty)

        let message = alert.message
        #expect(message.key == Array(alert.fingerprint.utf8))
        let value = try #require(JSONValue(parsing: String(decoding: message.value, as: UTF8.self)))
        guard case .object(let members) = value else {
            Issue.record("alert message is not an object")
            return
        }
        let fields = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(fields["status"] == .string("resolved"))
        #expect(fields["endsAt"] == .string("2026-11-30T09:02:00Z"))
        #expect(fields["fingerprint"] == .string(alert.fingerprint))
    }

    @Test func fingerprintsAreStableAndDistinct() {
        let a = AlertFinding(spike: spike())
        #expect(a.fingerprint == AlertFinding(spike: spike(ratio: 99)).fingerprint)
        #expect(a.fingerprint != AlertFinding(spike: spike(version: nil)).fingerprint)
        #expect(a.fingerprint.count == 16)
    }

    @Test func anEvaluationScopedToOneAppLeavesOtherAppsOpen() throws {
        let store = InMemoryRollupStore()
        let evaluator = AlertEvaluator(store: store)
        var other = spike()
        other.appID = "com.example.other"
        _ = try evaluator.evaluate(
            [AlertFinding(spike: spike()), AlertFinding(spike: other)], at: History.time("2026-11-30T09:00:00Z"))
        let scoped = try evaluator.evaluate(
            [], at: History.time("2026-11-30T09:01:00Z"), scope: .init(appID: "com.example.shop"))
        #expect(scoped.resolved.map { $0.labels["app_id"] } == ["com.example.shop"])
        #expect(try store.openAlerts().map { $0.labels["app_id"] } == ["com.example.other"])
    }

    @Test func alertmanagerReceivesThenResolvesTheAlert() async throws {
        // `make test` installs Alertmanager, so a missing binary is a broken setup, not a reason to pass.
        try #require(
            AlertmanagerServer.isInstalled,
            "\(AlertmanagerServer.binary) is missing: apt-get install prometheus-alertmanager")
        let alertmanager = try AlertmanagerServer()
        defer { alertmanager.stop() }
        try #require(try await alertmanager.waitUntilReady(), "Alertmanager did not become ready")

        let store = InMemoryRollupStore()
        let evaluator = AlertEvaluator(store: store)
        let notifier = AlertmanagerNotifier(baseURL: try #require(URL(string: alertmanager.baseURL)))
        let now = Timestamp(Date())
        let opened = try evaluator.evaluate([AlertFinding(spike: spike())], at: now)
        try await notifier.send(opened.alertmanagerAlerts)

        let listed = try await poll(alertmanager) { alerts in
            alerts.contains { $0.labels["widget_type"] == "hologram_projector" }
        }
        let alert = try #require(listed.first)
        #expect(alert.labels["alertname"] == "FlowmeterSpike")
        #expect(alert.labels["severity"] == "warning")
        #expect(alert.labels["app_id"] == "com.example.shop")
        #expect(alert.labels["kind"] == "unknownType")
        #expect(alert.labels["app_version"] == "5.2.1")
        #expect(alert.annotations["summary"]?.contains("hologram_projector") == true)
        #expect(alert.status.state == "active")

        let resolved = try evaluator.evaluate([], at: Timestamp(Date()))
        try await notifier.send(resolved.alertmanagerAlerts)
        // A resolved alert leaves Alertmanager's list of current alerts.
        let after = try await poll(alertmanager) { alerts in alerts.isEmpty }
        #expect(after.isEmpty)
    }

    @Test func alertmanagerRefusalIsAnError() async throws {
        try #require(
            AlertmanagerServer.isInstalled,
            "\(AlertmanagerServer.binary) is missing: apt-get install prometheus-alertmanager")
        let alertmanager = try AlertmanagerServer()
        defer { alertmanager.stop() }
        try #require(try await alertmanager.waitUntilReady(), "Alertmanager did not become ready")
        var bad = AlertFinding(spike: spike())
        bad.labels = ["": "no name"]
        let alert = Alert(
            fingerprint: bad.fingerprint, status: .firing, kind: .spike, labels: bad.labels, annotations: [:],
            startsAt: Timestamp(Date()), endsAt: nil, payload: .null)
        let url = try #require(URL(string: alertmanager.baseURL))
        await #expect(throws: DetectorError.self) {
            try await AlertmanagerNotifier(baseURL: url).send([alert])
        }
    }

    struct ListedAlert: Decodable {
        struct Status: Decodable { var state: String }
        var labels: [String: String]
        var annotations: [String: String]
        var status: Status
    }

    /// Reads `GET /api/v2/alerts` until `done` holds (the suite's hang guard bounds it); returns the last list.
    func poll(_ alertmanager: AlertmanagerServer, until done: ([ListedAlert]) -> Bool) async throws
        -> [ListedAlert]
    {
        let deadline = ContinuousClock.now + Eventually.hangGuard
        var alerts: [ListedAlert] = []
        repeat {
            let answer = try await alertmanager.get("/api/v2/alerts")
            #expect(answer.status == 200)
            alerts = try JSONDecoder().decode([ListedAlert].self, from: Data(answer.body))
            if done(alerts) { return alerts }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return alerts
    }
}

@Suite struct IncidentAlertTests {
    func incident(versions: [String] = ["5.1.0", "5.2.1"]) -> Incident {
        var spikes = [
            Spike(
                appID: "com.example.shop", kind: .malformedPayload, widgetType: "image_text_card", appVersion: nil,
                onset: History.time("2026-11-30T10:00:00Z"), peakWindowStart: History.time("2026-11-30T10:05:00Z"),
                end: History.time("2026-11-30T10:15:00Z"), count: 300, baseline: 5, ratio: 60, isNormalized: false,
                suspectDeploy: nil, backendReleases: ["page-api@4"])
        ]
        for version in versions {
            var spike = spikes[0]
            spike.appVersion = version
            spike.count = 150
            spikes.append(spike)
        }
        return Incident(spikes: spikes)
    }

    @Test func oneAlertPerIncidentWithoutAVersionLabel() {
        let alert = AlertFinding(incident: incident(), team: "catalog")
        #expect(alert.labels["app_version"] == nil)
        #expect(alert.labels["team"] == "catalog")
        #expect(alert.labels["alertname"] == "FlowmeterSpike")
        #expect(alert.summary.contains("on 2 versions"))
        #expect(alert.description.contains("5.1.0 (150), 5.2.1 (150)"))
        // More versions joining, or a new owner, is the same alert.
        #expect(alert.fingerprint == AlertFinding(incident: incident(versions: ["5.1.0"]), team: nil).fingerprint)
    }

    @Test func aRegressedTypeSaysSoInItsAlert() {
        let type = UngatedType(
            appID: "com.example.shop", widgetType: "hologram_projector", events: 100, installs: 20,
            affectedVersions: [], renderingVersions: ["5.3.0"], suggestedMinAppVersion: "5.3.0",
            firstSeen: History.time("2026-11-30T10:00:00Z"), suspectDeploy: nil, likelyTypoOf: nil,
            status: .regressed, lastSeenBefore: History.time("2026-11-28T06:00:00Z"))
        let alert = AlertFinding(ungated: type, team: "immersive")
        #expect(alert.summary.hasPrefix("Regressed: "))
        #expect(alert.description.contains("last seen 2026-11-28T06:00:00Z"))
        var fresh = type
        fresh.status = .new
        #expect(!AlertFinding(ungated: fresh).summary.contains("Regressed"))
        #expect(alert.fingerprint == AlertFinding(ungated: fresh).fingerprint)
    }

    @Test func anIncidentAlertResolvesWhenTheIncidentEnds() throws {
        let store = InMemoryRollupStore()
        let evaluator = AlertEvaluator(store: store)
        let incident = incident()
        let during = History.time("2026-11-30T10:17:00Z")
        let findings = [incident].filter { $0.isOngoing(at: during, bucketSeconds: 300, gapBuckets: 1) }
            .map { AlertFinding(incident: $0) }
        #expect(try evaluator.evaluate(findings, at: during).opened.count == 1)
        let after = History.time("2026-11-30T10:25:00Z")
        let later = [incident].filter { $0.isOngoing(at: after, bucketSeconds: 300, gapBuckets: 1) }
            .map { AlertFinding(incident: $0) }
        #expect(later.isEmpty)
        #expect(try evaluator.evaluate(later, at: after).resolved.count == 1)
    }
}
