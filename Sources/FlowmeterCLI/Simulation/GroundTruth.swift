import FlowmeterModels
import Foundation

/// What a simulation planted, for `simulate --truth FILE`: the findings the detector should report, and the ones
/// it must not.
struct GroundTruth: Encodable, Sendable {
    /// A deploy the simulation recorded, and the finding it introduced.
    struct Deploy: Encodable, Sendable {
        var service: String
        var version: String
        var release: String
        var finishedAt: String
        /// `ungatedType`, `typo`, `malformedPayload`, or null for a harmless deploy.
        var introduces: String?
    }

    /// The shared part of every planted finding.
    struct Introduction: Encodable, Sendable {
        var service: String
        var version: String
        var finishedAt: String
    }

    /// A type sent to versions that cannot render it.
    struct Ungated: Encodable, Sendable {
        var appID: String
        var widgetType: String
        var suggestedGate: String
        var affectedVersions: [String]
        var renderingVersions: [String]
        var introducedBy: Introduction
    }

    /// A misspelled type.
    struct Typo: Encodable, Sendable {
        var appID: String
        var widgetType: String
        var likelyTypoOf: String
        var introducedBy: Introduction
    }

    /// A payload missing a key; it shows as a spike of `malformedPayload` for the type.
    struct Malformed: Encodable, Sendable {
        var appID: String
        var widgetType: String
        var missingKey: String
        var message: String
        var introducedBy: Introduction
    }

    /// Widgets sharing an id on one page, steady through the run.
    struct DuplicateIDs: Encodable, Sendable {
        var appID: String
        var pageID: String
        var widgetType: String
    }

    /// What was sent and how the collector answered.
    struct Requests: Encodable, Sendable {
        var planned: Int
        var sent: Int
        var accepted: Int
        var clientErrors: Int
        var serverErrors: Int
        var transportErrors: Int
        var retries: Int
        var eventsAccepted: Int
        var eventsDropped: Int
        var wallSeconds: Double
    }

    var seed: UInt64
    var from: String
    var to: String
    var apps: [String]
    var ungated: [Ungated]
    var typos: [Typo]
    var malformed: [Malformed]
    var duplicateIDs: [DuplicateIDs]
    /// Types the detector must not flag: `dev_playground_widget` comes from debug builds only, and `story_ring` is
    /// gated correctly.
    var notFlagged: [String]
    var deploys: [Deploy]
    var deploysRecorded: Bool
    var requests: Requests?

    /// The truth of `scenario`, before anything is sent.
    init(scenario: TrafficScenario, deploysRecorded: Bool) {
        func time(_ seconds: Int64) -> String { Timestamp(secondsSinceEpoch: seconds).rfc3339String }
        func introduction(_ fault: SimulatedDeploy.Fault) -> Introduction {
            let deploy = scenario.deploys.first { $0.fault == fault }!
            return Introduction(
                service: deploy.service, version: deploy.version, finishedAt: time(scenario.finishedAt(deploy)))
        }
        let shop = scenario.apps[0]
        seed = scenario.seed
        from = time(scenario.start)
        to = time(scenario.end)
        apps = scenario.apps.map(\.appID)
        ungated = [
            Ungated(
                appID: shop.appID, widgetType: TrafficScenario.ungatedType, suggestedGate: TrafficScenario.ungatedGate,
                affectedVersions: shop.versions.filter { !$0.registeredTypes.contains(TrafficScenario.ungatedType) }
                    .map(\.name),
                renderingVersions: shop.versions.filter { $0.registeredTypes.contains(TrafficScenario.ungatedType) }
                    .map(\.name),
                introducedBy: introduction(.ungatedType))
        ]
        typos = [
            Typo(
                appID: shop.appID, widgetType: TrafficScenario.typo, likelyTypoOf: TrafficScenario.typoOf,
                introducedBy: introduction(.typo))
        ]
        malformed = [
            Malformed(
                appID: shop.appID, widgetType: TrafficScenario.malformedType, missingKey: TrafficScenario.missingKey,
                message: "Missing key '\(TrafficScenario.missingKey)'", introducedBy: introduction(.malformedPayload))
        ]
        duplicateIDs = [
            DuplicateIDs(
                appID: shop.appID, pageID: TrafficScenario.duplicatePage, widgetType: TrafficScenario.duplicateType)
        ]
        notFlagged = [TrafficScenario.debugOnlyType, TrafficScenario.gatedType]
        deploys = scenario.deploys.map {
            Deploy(
                service: $0.service, version: $0.version, release: $0.release,
                finishedAt: time(scenario.finishedAt($0)), introduces: $0.fault?.rawValue)
        }
        self.deploysRecorded = deploysRecorded
    }

    /// The truth as pretty-printed JSON with sorted keys.
    func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
