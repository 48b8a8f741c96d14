import Detector
import FlowmeterModels
import Rollups
import Testing

@Suite struct IncidentTests {
    let start = History.time("2026-11-30T08:00:00Z")
    let end = History.time("2026-11-30T12:00:00Z")
    let versions = ["5.1.0", "5.2.0", "5.2.1", "5.3.0"]

    /// Four versions live all along; from 10:00 `image_text_card` payloads break in all of them.
    func malformedAcrossVersions(_ history: History, brokenUntil: Timestamp? = nil) throws {
        try history.deploy(service: "page-api", version: "4", finishedAt: History.time("2026-11-30T09:58:00Z"))
        for index in Int64(0)..<48 {
            let at = start.adding(seconds: index * 300)
            let broken = at >= History.time("2026-11-30T10:00:00Z") && at < (brokenUntil ?? end)
            for (position, version) in versions.enumerated() {
                history.traffic(version: version, at: at, batches: 30)
                let count: Int64 = broken ? 40 + Int64(position) * 20 : 1 + index % 2
                history.events(
                    count, kind: .malformedPayload, type: "image_text_card", version: version, at: at, installs: 10,
                    releases: [broken ? "page-api@4" : "page-api@3": count])
            }
        }
    }

    @Test func overlappingPerVersionSpikesFormOneIncident() throws {
        let history = History()
        try malformedAcrossVersions(history)

        let report = try SpikeDetector().report(reader: history.store, from: start, to: end)
        #expect(report.spikes.count == 5)
        let incident = try #require(report.incidents.first)
        #expect(report.incidents.count == 1)
        #expect(incident.kind == .malformedPayload)
        #expect(incident.widgetType == "image_text_card")
        #expect(incident.versions.map(\.appVersion) == versions)
        #expect(incident.onset == History.time("2026-11-30T10:00:00Z"))
        // The headline is the across-versions spike's: every version's events together.
        let across = try #require(report.spikes.first { $0.appVersion == nil })
        #expect(incident.count == across.count)
        #expect(incident.count == 40 + 60 + 80 + 100)
        #expect(incident.versions.map(\.count) == [40, 60, 80, 100])
        #expect(incident.suspectDeploy?.version == "4")
        #expect(incident.backendReleases.first == "page-api@4")
        #expect(incident.spikes.count == 5)
    }

    @Test func theSameCauseTwiceIsTwoIncidents() throws {
        let history = History()
        try malformedAcrossVersions(history, brokenUntil: History.time("2026-11-30T10:30:00Z"))
        // It breaks again at 11:30, an hour after the first stretch ended.
        for index in Int64(42)..<48 {
            let at = start.adding(seconds: index * 300)
            history.events(
                300, kind: .malformedPayload, type: "image_text_card", version: "5.2.1", at: at, installs: 10)
        }
        let report = try SpikeDetector().report(reader: history.store, from: start, to: end)
        #expect(report.incidents.count == 2)
        #expect(
            report.incidents.map(\.onset) == [
                History.time("2026-11-30T10:00:00Z"), History.time("2026-11-30T11:30:00Z"),
            ])
    }

    @Test func differentTypesAreDifferentIncidents() {
        func spike(_ type: String, version: String?) -> Spike {
            Spike(
                appID: "com.example.shop", kind: .unknownType, widgetType: type, appVersion: version,
                onset: History.time("2026-11-30T10:00:00Z"), peakWindowStart: History.time("2026-11-30T10:05:00Z"),
                end: History.time("2026-11-30T10:15:00Z"), count: 100, baseline: 0, ratio: 100, isNormalized: false,
                suspectDeploy: nil, backendReleases: [])
        }
        let incidents = Incident.grouping(
            [spike("a", version: nil), spike("a", version: "5.2.1"), spike("b", version: "5.2.1")], gapSeconds: 300)
        #expect(incidents.map(\.widgetType) == ["a", "b"])
        // Only a single version crossed for b: its figures are the incident's, and it lists that version.
        #expect(incidents[1].versions.map(\.appVersion) == ["5.2.1"])
        #expect(incidents[1].count == 100)
    }

    @Test func anIncidentIsOngoingUntilTwoWholeBucketsPassWithoutAFlaggedOne() {
        let spike = Spike(
            appID: "com.example.shop", kind: .unknownType, widgetType: "a", appVersion: nil,
            onset: History.time("2026-11-30T09:30:00Z"), peakWindowStart: History.time("2026-11-30T09:35:00Z"),
            end: History.time("2026-11-30T09:55:00Z"), count: 100, baseline: 0, ratio: 100, isNormalized: false,
            suspectDeploy: nil, backendReleases: [])
        let incident = Incident(spikes: [spike])
        // The last flagged bucket is 09:50–09:55; at 10:02 only 09:55–10:00 has passed unflagged.
        #expect(incident.isOngoing(at: History.time("2026-11-30T10:02:00Z"), bucketSeconds: 300, gapBuckets: 1))
        #expect(!incident.isOngoing(at: History.time("2026-11-30T10:05:00Z"), bucketSeconds: 300, gapBuckets: 1))
    }
}
