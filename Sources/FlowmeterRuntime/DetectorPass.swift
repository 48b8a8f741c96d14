public import Detector
public import FlowmeterModels
public import Foundation
public import Kafka
import Lifecycle
public import Logging
public import RollupStore
import Rollups

/// One detector pass over a store: spike incidents, ungated types and new types become findings, the evaluator
/// opens and resolves alerts in the store, and the changes go to the alerts topic and Alertmanager.
///
/// `flowmeter watch --once` runs one; ``DetectorService`` runs one every interval.
public struct DetectorPass: Sendable {
    /// The store read and whose alert state is kept.
    public var store: any RollupStore
    /// Where opened and resolved alerts are published, when there is Kafka.
    public var producer: KafkaProducer?
    /// The alerts topic.
    public var topic: String
    /// Alertmanager, when configured.
    public var notifier: AlertmanagerNotifier?
    /// The window each pass examines, ending now.
    public var window: Duration
    /// Only this app, or every app.
    public var appID: String?
    /// The ungated-type finder with its thresholds.
    public var ungated: UngatedTypeFinder
    /// Who owns what: each alert's `team` label.
    public var owners: OwnerRules?

    /// A pass.
    public init(
        store: any RollupStore, producer: KafkaProducer?, topic: String, notifier: AlertmanagerNotifier?,
        window: Duration, appID: String?, ungated: UngatedTypeFinder, owners: OwnerRules?
    ) {
        self.store = store
        self.producer = producer
        self.topic = topic
        self.notifier = notifier
        self.window = window
        self.appID = appID
        self.ungated = ungated
        self.owners = owners
    }

    /// Runs the detectors and the evaluator (on a thread: store reads block), then publishes; returns the
    /// evaluation.
    public func run(now: Timestamp = Timestamp(Date())) async throws -> AlertEvaluation {
        let evaluation = try await onThread(named: "detector-pass") { [self] in try evaluate(now: now) }
        if let producer {
            for message in evaluation.messages {
                _ = try await producer.send(
                    KafkaProducerMessage(
                        topic: topic, key: message.key, value: message.value, headers: KafkaHeader.json(schema: topic)))
            }
        }
        if let notifier {
            try await notifier.send(evaluation.alertmanagerAlerts)
        }
        return evaluation
    }

    private func evaluate(now: Timestamp) throws -> AlertEvaluation {
        let from = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - window.components.seconds)
        var findings: [AlertFinding] = []
        let detector = SpikeDetector()
        let bucket = detector.configuration.bucketSeconds
        let gap = detector.configuration.mergeGapBuckets
        // One alert per incident while it goes on; once two whole buckets pass without a flagged one, the
        // incident is over and its alert resolves, even though its spikes stay in the window for a while.
        for incident in try detector.report(reader: store, from: from, to: now, appID: appID).incidents
        where incident.isOngoing(at: now, bucketSeconds: bucket, gapBuckets: gap) {
            let team = owners?.team(appID: incident.appID, widgetType: incident.widgetType, pages: incident.pages)
            findings.append(AlertFinding(incident: incident, team: team))
        }
        for type in try ungated.report(reader: store, from: from, to: now, appID: appID).ungated {
            let team = owners?.team(appID: type.appID, widgetType: type.widgetType, pages: type.pages)
            findings.append(AlertFinding(ungated: type, team: team))
        }
        for type in try NewTypeFinder().newTypes(reader: store, from: from, to: now, appID: appID) {
            findings.append(
                AlertFinding(newType: type, team: owners?.team(appID: type.appID, widgetType: type.widgetType)))
        }
        return try AlertEvaluator(store: store).evaluate(findings, at: now, scope: AlertEvaluator.Scope(appID: appID))
    }

    /// Logs an evaluation: counts, then each opened alert (fingerprint and summary) and each resolved one.
    public static func log(_ evaluation: AlertEvaluation, to logger: Logger) {
        let firing = evaluation.opened + evaluation.continuing
        let count: (AlertState.Kind) -> String = { kind in String(firing.count { $0.kind == kind }) }
        logger.info(
            "watch pass",
            [
                "opened": String(evaluation.opened.count), "continuing": String(evaluation.continuing.count),
                "resolved": String(evaluation.resolved.count), "spikes": count(.spike),
                "ungated_types": count(.ungatedType), "new_types": count(.newType),
            ])
        for alert in evaluation.opened {
            logger.warning(
                "alert opened", ["fingerprint": alert.fingerprint, "summary": alert.annotations["summary"] ?? ""])
        }
        for alert in evaluation.resolved {
            logger.info("alert resolved", ["fingerprint": alert.fingerprint])
        }
    }
}
