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
        /// `regressed` when its earlier episode was planted, else `new`.
        var status: String
    }

    /// A misspelled type.
    struct Typo: Encodable, Sendable {
        var appID: String
        var widgetType: String
        var likelyTypoOf: String
        var introducedBy: Introduction
        var status: String
    }

    /// One planted cause as `flowmeter spikes` should report it: one incident, hitting only these versions.
    struct Incident: Encodable, Sendable {
        var appID: String
        var kind: String
        var widgetType: String
        /// The versions the cause reaches; the incident's `versions` are those of them whose own series crossed the
        /// thresholds.
        var versions: [String]
        var introducedBy: Introduction
    }

    /// An ungated type that was sent before, stopped, and came back.
    struct Regression: Encodable, Sendable {
        var appID: String
        var widgetType: String
        /// The hour of the earlier episode.
        var earlierFrom: String
        var earlierTo: String
        var earlierDeploy: Introduction
        var returnedWith: Introduction
    }

    /// A type only some live versions render (by capabilities), and the version to gate it at.
    struct Gate: Encodable, Sendable {
        var appID: String
        var widgetType: String
        var minAppVersion: String
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
        /// The `count`s of the events of planned batches whose upload ended delivered (202): the occurrences a store
        /// fed by the collectors holds (exactly, when `occurrencesUncertain` and `eventsDropped` are 0), in all and
        /// per kind.
        var occurrencesAccepted: Int
        var occurrencesByKind: [String: Int]
        /// Occurrences of batches whose upload did not end delivered: some may have arrived.
        var occurrencesUncertain: Int
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
    /// One per planted cause: the ungated type, the typo and the malformed payload.
    var incidents: [Incident]
    var regressions: [Regression]
    var gates: [Gate]
    /// The gates once every app's manifests are uploaded (`simulate --manifests`): then apps that send no
    /// capabilities have gates too.
    var gatesWithManifests: [Gate]
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
                introducedBy: introduction(.ungatedType), status: scenario.earlierEpisode == nil ? "new" : "regressed")
        ]
        typos = [
            Typo(
                appID: shop.appID, widgetType: TrafficScenario.typo, likelyTypoOf: TrafficScenario.typoOf,
                introducedBy: introduction(.typo), status: "new")
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
        let allShopVersions = shop.versions.map(\.name)
        incidents = [
            Incident(
                appID: shop.appID, kind: DiagnosticKind.unknownType.rawValue, widgetType: TrafficScenario.ungatedType,
                versions: ungated[0].affectedVersions, introducedBy: introduction(.ungatedType)),
            Incident(
                appID: shop.appID, kind: DiagnosticKind.unknownType.rawValue, widgetType: TrafficScenario.typo,
                versions: allShopVersions, introducedBy: introduction(.typo)),
            Incident(
                appID: shop.appID, kind: DiagnosticKind.malformedPayload.rawValue,
                widgetType: TrafficScenario.malformedType, versions: allShopVersions,
                introducedBy: introduction(.malformedPayload)),
        ]
        regressions =
            scenario.earlierEpisode.map { episode in
                [
                    Regression(
                        appID: shop.appID, widgetType: TrafficScenario.ungatedType,
                        earlierFrom: time(episode.lowerBound),
                        earlierTo: time(episode.upperBound), earlierDeploy: introduction(.earlierUngatedType),
                        returnedWith: introduction(.ungatedType))
                ]
            } ?? []
        gates = Self.gates(of: scenario.apps.filter(\.sendsCapabilities))
        gatesWithManifests = Self.gates(of: scenario.apps)
        notFlagged = [TrafficScenario.debugOnlyType, TrafficScenario.gatedType]
        deploys = scenario.deploys.map {
            Deploy(
                service: $0.service, version: $0.version, release: $0.release,
                finishedAt: time(scenario.finishedAt($0)), introduces: $0.fault?.rawValue)
        }
        self.deploysRecorded = deploysRecorded
    }

    /// Per app of `apps`, each type some but not all versions register, gated at the lowest registering version
    /// above every version that does not (every version of the fleet is live).
    static func gates(of apps: [SimulatedApp]) -> [Gate] {
        var gates: [Gate] = []
        for app in apps {
            let types = Set(app.versions.flatMap(\.registeredTypes)).sorted()
            for type in types {
                let rendering = app.versions.filter { $0.registeredTypes.contains(type) }.map(\.name)
                let missing = app.versions.filter { !$0.registeredTypes.contains(type) }.map(\.name)
                guard !missing.isEmpty, let newestMissing = missing.max(by: { AppVersion($0) < AppVersion($1) }),
                    let gate = rendering.filter({ AppVersion($0) > AppVersion(newestMissing) })
                        .min(by: { AppVersion($0) < AppVersion($1) })
                else { continue }
                gates.append(Gate(appID: app.appID, widgetType: type, minAppVersion: gate))
            }
        }
        return gates
    }

    /// The truth as pretty-printed JSON with sorted keys.
    func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
