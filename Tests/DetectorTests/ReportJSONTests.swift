import Detector
import FlowmeterModels
import Rollups
import Testing

@Suite struct ReportJSONTests {
    @Test func ungatedReportMatchesTheContract() {
        let report = UngatedReport(
            from: History.time("2026-11-30T06:00:00Z"), to: History.time("2026-11-30T10:00:00Z"),
            ungated: [
                UngatedType(
                    appID: "com.example.shop", widgetType: "hologram_projector", events: 1234, installs: 456,
                    affectedVersions: [
                        AffectedVersion(appVersion: "5.2.1", events: 800, installs: 300, installShare: 0.41)
                    ],
                    renderingVersions: ["5.3.0", "5.4.0"], suggestedMinAppVersion: "5.3.0",
                    firstSeen: History.time("2026-11-30T08:47:00Z"),
                    suspectDeploy: SuspectDeploy(
                        service: "page-api", version: "2026.11.30-2", finishedAt: History.time("2026-11-30T08:44:10Z"),
                        lagSeconds: 170, evidence: .backendRelease),
                    likelyTypoOf: nil),
                UngatedType(
                    appID: "com.example.shop", widgetType: "title_blok", events: 30, installs: 8,
                    affectedVersions: [AffectedVersion(appVersion: "5.2.1", events: 30, installs: 8, installShare: 1)],
                    renderingVersions: [], suggestedMinAppVersion: nil,
                    firstSeen: History.time("2026-11-30T07:00:00.5Z"), suspectDeploy: nil, likelyTypoOf: "title_block"),
            ])
        let expected =
            #"{"from":"2026-11-30T06:00:00Z","to":"2026-11-30T10:00:00Z","ungated":["#
            + #"{"appID":"com.example.shop","widgetType":"hologram_projector","events":1234,"installs":456,"#
            + #""affectedVersions":[{"appVersion":"5.2.1","events":800,"installs":300,"installShare":0.41}],"#
            + #""renderingVersions":["5.3.0","5.4.0"],"suggestedGate":{"minAppVersion":"5.3.0"},"#
            + #""firstSeen":"2026-11-30T08:47:00Z","suspectDeploy":{"service":"page-api","version":"2026.11.30-2","#
            + #""finishedAt":"2026-11-30T08:44:10Z","lagSeconds":170},"likelyTypoOf":null,"#
            + #""status":"new"},"#
            + #"{"appID":"com.example.shop","widgetType":"title_blok","events":30,"installs":8,"#
            + #""affectedVersions":[{"appVersion":"5.2.1","events":30,"installs":8,"installShare":1}],"#
            + #""renderingVersions":[],"suggestedGate":null,"firstSeen":"2026-11-30T07:00:00.5Z","#
            + #""suspectDeploy":null,"likelyTypoOf":"title_block","status":"new"}]}"#
        #expect(report.jsonString() == expected)
        #expect(JSONValue(parsing: report.jsonString(prettyPrinted: true)) == JSONValue(parsing: expected))
    }

    @Test func spikesReportMatchesTheContract() {
        let report = SpikesReport(
            from: History.time("2026-11-30T06:00:00Z"), to: History.time("2026-11-30T10:00:00Z"),
            spikes: [
                Spike(
                    appID: "com.example.shop", kind: .unknownType, widgetType: "hologram_projector", appVersion: nil,
                    onset: History.time("2026-11-30T08:45:00Z"), peakWindowStart: History.time("2026-11-30T08:50:00Z"),
                    end: History.time("2026-11-30T09:00:00Z"), count: 240, baseline: 10.5, ratio: 22.86,
                    isNormalized: true, suspectDeploy: nil, backendReleases: ["page-api@2", "page-api@1"])
            ])
        let expected =
            #"{"from":"2026-11-30T06:00:00Z","to":"2026-11-30T10:00:00Z","spikes":[{"appID":"com.example.shop","#
            + #""kind":"unknownType","widgetType":"hologram_projector","appVersion":null,"#
            + #""onset":"2026-11-30T08:45:00Z","peakWindowStart":"2026-11-30T08:50:00Z","count":240,"#
            + #""baseline":10.5,"ratio":22.86,"suspectDeploy":null,"backendReleases":["page-api@2","page-api@1"]}],"#
            + #""incidents":[{"appID":"com.example.shop","kind":"unknownType","widgetType":"hologram_projector","#
            + #""onset":"2026-11-30T08:45:00Z","peakWindowStart":"2026-11-30T08:50:00Z","count":240,"#
            + #""baseline":10.5,"ratio":22.86,"versions":[],"suspectDeploy":null,"#
            + #""backendReleases":["page-api@2","page-api@1"]}]}"#
        #expect(report.jsonString() == expected)
        #expect(SpikesReport(from: report.from, to: report.to, spikes: []).exitStatus == 0)
    }

    @Test func stringsAreEscaped() {
        let value = JSONValue.object([("type", .string("a\"b\\c\nd\u{01}é"))])
        #expect(value.serialized() == #"{"type":"a\"b\\c\nd\u0001é"}"#)
        #expect(JSONValue(parsing: value.serialized()) == value)
    }
}
