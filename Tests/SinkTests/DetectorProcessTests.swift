import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups
import TestSupport
import Testing

/// The detector as users run it: `watch --once` into a real Alertmanager, and `serve --store` detecting in process.
@Suite struct DetectorProcessTests {
    /// The type release builds of 5.2.1 report as unknown and 5.3.0 registers.
    static let ungatedType = "hologram_projector"

    @Test func watchOnceWithAlertmanagerPutsTheUngatedAlertIntoItsAPI() async throws {
        // `make test` installs Alertmanager, so a missing binary is a broken setup, not a reason to pass.
        try #require(
            AlertmanagerServer.isInstalled,
            "\(AlertmanagerServer.binary) is missing: apt-get install prometheus-alertmanager")
        let alertmanager = try AlertmanagerServer()
        defer { alertmanager.stop() }
        let directory = try TemporaryDirectory(prefix: "flowmeter-watch")
        defer { directory.remove() }
        let path = directory.file("flowmeter.sqlite")
        try Self.seedUngatedType(into: openRollupStore(url: path))
        try #require(try await alertmanager.waitUntilReady(), "Alertmanager did not become ready")

        let watched = try await FlowmeterExecutable.run([
            "watch", "--once", "--store", path, "--since", "1h", "--alertmanager", alertmanager.baseURL,
        ])
        #expect(watched.status == 3, "\(watched.errors)")
        let listed = try await Self.poll(alertmanager) { alerts in alerts.contains(where: Self.isUngatedAlert) }
        let alert = try #require(listed.first(where: Self.isUngatedAlert), "no ungated alert in \(listed)")
        let labels = alert["labels"] as? [String: String]
        #expect(labels?["app_id"] == ServeProcess.app)
        #expect(labels?["severity"] == "critical")
        #expect((alert["status"] as? [String: Any])?["state"] as? String == "active")
        let summary = (alert["annotations"] as? [String: String])?["summary"]
        #expect(summary?.isEmpty == false)
    }

    @Test func serveWithAStoreDetectsInProcessAndPublishesTheAlert() async throws {
        let kafka = try KafkaFixture()
        try #require(
            AlertmanagerServer.isInstalled,
            "\(AlertmanagerServer.binary) is missing: apt-get install prometheus-alertmanager")
        let alertmanager = try AlertmanagerServer()
        defer { alertmanager.stop() }
        let directory = try TemporaryDirectory(prefix: "flowmeter-serve-detect")
        defer { directory.remove() }
        let path = directory.file("flowmeter.sqlite")
        try #require(try await alertmanager.waitUntilReady(), "Alertmanager did not become ready")
        let serve = try await ServeProcess(
            [
                "--kafka", kafka.bootstrapServers.joined(separator: ","), "--store", path,
                "--detect-interval", "2s", "--detect-window", "1h",
                "--alertmanager", alertmanager.baseURL,
            ])
        try await serve.postUngatedTraffic(waitingIn: path)

        let messages = try await kafka.consume(topic: KafkaFixture.alertsTopic) { messages in
            messages.contains { Self.isUngatedMessage($0) }
        }
        let message = try #require(messages.first { Self.isUngatedMessage($0) }, "no ungated alert in the alerts topic")
        let value = try #require(try JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any])
        #expect(value["status"] as? String == "firing")
        #expect(message.key == (value["fingerprint"] as? String).map { Array($0.utf8) })
        #expect(message.header(named: "schema") == Array(KafkaFixture.alertsTopic.utf8))
        let finding = value["finding"] as? [String: Any]
        #expect((finding?["suggestedGate"] as? [String: Any])?["minAppVersion"] as? String == "5.3.0")
        #expect(finding?["renderingVersions"] as? [String] == ["5.3.0"])
        let listed = try await Self.poll(alertmanager) { alerts in alerts.contains(where: Self.isUngatedAlert) }
        #expect(listed.contains(where: Self.isUngatedAlert))

        // SIGTERM stops the detector before the producer, and the process still exits cleanly.
        #expect(try await serve.terminate() == 0)
        let open = try openRollupStore(url: path).openAlerts()
        #expect(open.contains { $0.kind == .ungatedType && $0.labels["widget_type"] == Self.ungatedType })
    }

    @Test func serveDetectIntervalZeroRunsNoDetector() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-serve-nodetect")
        defer { directory.remove() }
        let path = directory.file("flowmeter.sqlite")
        let serve = try await ServeProcess([
            "--kafka", "none", "--store", path, "--detect-interval", "0",
        ])
        try await serve.postUngatedTraffic()
        #expect(try await serve.terminate() == 0)
        // The rollups are there, so a pass would have opened an alert; with the detector off none was.
        let store = try openRollupStore(url: path)
        #expect(try SinkFixture.totals(of: store).events > 0)
        #expect(try store.openAlerts().isEmpty)
    }

    @Test func serveRefusesABadAlertmanagerURLAndDetectInterval() async throws {
        let badURL = try await ServeProcess.runRefusing(["--alertmanager", "ftp://example"])
        #expect(badURL.status == 2)
        #expect(badURL.errors.contains("--alertmanager"))
        let badInterval = try await ServeProcess.runRefusing(["--detect-interval", "soon"])
        #expect(badInterval.status == 2)
        #expect(badInterval.errors.contains("--detect-interval"))
    }

    /// Applies, straight into `store`, 30 release batches of 5.2.1 from 8 installs reporting `ungatedType` as unknown
    /// (60 events) and 3 batches of 5.3.0 that register it.
    static func seedUngatedType(into store: any RollupStore) throws {
        let aggregator = RollupAggregator(configuration: .init(collectorID: "seed"))
        let now = Timestamp(Date())
        for index in 0..<30 {
            let client = ClientInfo(appID: ServeProcess.app, appVersion: "5.2.1", platform: "ios")
            let event = DiagnosticEvent(
                kind: .unknownType, widgetType: ungatedType, count: 2,
                occurredAt: Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - 120))
            aggregator.record(
                [event], client: client, decodes: 10, installHash: SinkFixture.installHash(index % 8), receivedAt: now)
        }
        for index in 0..<3 {
            let client = ClientInfo(
                appID: ServeProcess.app, appVersion: "5.3.0", platform: "ios",
                capabilities: Capabilities(registeredTypes: [ungatedType, "title_block"]))
            aggregator.record(
                [], client: client, decodes: 10, installHash: SinkFixture.installHash(100 + index), receivedAt: now)
        }
        _ = try store.apply(aggregator.drain())
    }

    static func isUngatedAlert(_ alert: [String: Any]) -> Bool {
        let labels = alert["labels"] as? [String: String]
        return labels?["alertname"] == "FlowmeterUngatedType" && labels?["widget_type"] == ungatedType
    }

    static func isUngatedMessage(_ message: KafkaConsumerMessage) -> Bool {
        let text = String(decoding: message.value, as: UTF8.self)
        return text.contains(#""kind":"ungatedType""#) && text.contains(ungatedType)
    }

    /// Reads Alertmanager's current alerts until `isDone` holds (the suite's hang guard bounds it); returns the last
    /// list.
    static func poll(
        _ alertmanager: AlertmanagerServer, until isDone: ([[String: Any]]) -> Bool
    ) async throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + Eventually.hangGuard
        var alerts = try await alertmanager.alerts()
        while !isDone(alerts) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            alerts = try await alertmanager.alerts()
        }
        return alerts
    }
}

extension ServeProcess {
    /// Posts 3 batches of 5.3.0 whose capabilities register `DetectorProcessTests.ungatedType`, then 30 release
    /// batches of 5.2.1 from 8 installs, each reporting it as unknown twice (60 events); each must answer 202.
    func postUngatedTraffic(waitingIn store: String? = nil) async throws {
        let now = Date()
        // 5.3.0's capabilities first, and (with `store`) in the store before any unknownType traffic: a detector
        // pass that sees the traffic then also sees the version that renders the type, however loaded the machine.
        for index in Array(30..<33) + Array(0..<30) {
            if index == 0, let store { try await Self.waitForVersion("5.3.0", in: store) }
            let isNew = index >= 30
            let events =
                isNew
                ? ""
                : #"{"kind":"unknownType","widgetType":"\#(DetectorProcessTests.ungatedType)","count":2,"#
                    + #""occurredAt":"\#(now.addingTimeInterval(-5).formatted(.iso8601))"}"#
            let capabilities =
                isNew ? #","capabilities":{"registeredTypes":["\#(DetectorProcessTests.ungatedType)"]}"# : ""
            let body =
                #"{"id":"ungated-\#(index)","sentAt":"\#(now.formatted(.iso8601))","#
                + #""client":{"appID":"\#(ServeProcess.app)","appVersion":"\#(isNew ? "5.3.0" : "5.2.1")","#
                + #""platform":"ios","buildConfiguration":"release","installID":"INSTALL-\#(index % 8)""#
                + capabilities + #"},"decodes":10,"events":[\#(events)]}"#
            let answer = try await post(Array(body.utf8))
            try #require(answer.status == 202, "batch \(index) answered \(answer.status): \(answer.bodyText)")
        }
    }

    /// Waits (bounded by the suite's hang guard) until the store at `path` holds a version rollup of `appVersion`.
    static func waitForVersion(_ appVersion: String, in path: String) async throws {
        let store = try openRollupStore(url: path)
        let found = try await eventually(every: .milliseconds(500)) {
            let now = Int64(Date().timeIntervalSince1970)
            let versions = try store.versionRollups(
                from: Timestamp(secondsSinceEpoch: now - 3_600), to: Timestamp(secondsSinceEpoch: now + 3_600),
                appID: nil)
            return versions.contains(where: { $0.key.appVersion == appVersion })
        }
        if !found { Issue.record("no rollup of \(appVersion) reached the store") }
    }
}
