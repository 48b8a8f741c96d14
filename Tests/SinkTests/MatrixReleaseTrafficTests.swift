import Foundation
import TestSupport
import Testing

/// The release dimension of the version rollups, end to end through the real binary: batches posted to
/// `flowmeter serve --kafka none --store …`, counted by its sink, read back by `flowmeter matrix`.
@Suite struct MatrixReleaseTrafficTests {
    static let stable = "page-api@1"
    static let canary = "page-api@2"

    /// One batch of shop `version` with `decodes` and events given as (kind, type, release, count).
    static func batch(_ id: String, _ version: String, decodes: Int, _ events: [(String, String, String, Int)])
        -> String
    {
        let now = Date()
        let items = events.map { kind, type, release, count in
            #"{"kind":"\#(kind)","widgetType":"\#(type)","backendRelease":"\#(release)","count":\#(count),"#
                + #""occurredAt":"\#(now.addingTimeInterval(-2).formatted(.iso8601))"}"#
        }
        return
            #"{"id":"\#(id)","sentAt":"\#(now.formatted(.iso8601))","client":{"appID":"com.example.shop","#
            + #""appVersion":"\#(version)","platform":"ios","buildConfiguration":"release","#
            + #""installID":"install-\#(id)"},"decodes":\#(decodes),"events":[\#(items.joined(separator: ","))]}"#
    }

    @Test func eachBatchCountsForTheReleaseItsEventsCarryMostAndTheMatrixReadsIt() async throws {
        let server = try await CompatibilityAPITests.Server()
        // The batches land in one quarter-hour (the matrix's bucket): start well inside one.
        let intoQuarter = Int(Date().timeIntervalSince1970) % 900
        if intoQuarter > 870 { try await Task.sleep(for: .seconds(900 - intoQuarter + 1)) }
        var batches: [(String, String, Int, [(String, String, String, Int)])] = []
        for index in 0..<6 { batches.append(("clean-\(index)", "5.2.1", 10, [])) }
        batches.append(("a", "5.2.1", 5, [("droppedElement", "carousel", Self.stable, 1)]))
        batches.append(("b", "5.2.1", 5, [("droppedElement", "carousel", Self.stable, 1)]))
        // Two canary events against one stable: the batch is the canary's.
        batches.append(
            (
                "c", "5.2.1", 7,
                [("unknownType", "hologram_projector", Self.canary, 2), ("droppedElement", "carousel", Self.stable, 1)]
            ))
        for index in 0..<3 { batches.append(("newer-clean-\(index)", "5.3.0", 10, [])) }
        batches.append(("d", "5.3.0", 4, [("droppedElement", "carousel", Self.stable, 1)]))
        for (id, version, decodes, events) in batches {
            let answer = try await server.request(
                "POST", "/v1/diagnostics", key: CompatibilityAPITests.ingestKey,
                body: Self.batch(id, version, decodes: decodes, events))
            try #require(answer.status == 202, "\(answer.bodyText)")
        }

        let store = server.directory.file("store.sqlite")
        var rows: [[String: Any]] = []
        #expect(
            try await eventually(every: .milliseconds(500)) {
                let result = try await FlowmeterExecutable.run(
                    ["matrix", "--format", "json", "--since", "1h", "--store", store], timeout: .seconds(30))
                guard let object = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any],
                    let read = object["rows"] as? [[String: Any]]
                else { return false }
                rows = read
                // Every batch counted: 5.2.1's nine and 5.3.0's four.
                return read.contains { $0["appVersion"] as? String == "5.2.1" && $0["versionDecodes"] as? Int == 77 }
                    && read.contains { $0["appVersion"] as? String == "5.3.0" && $0["versionDecodes"] as? Int == 34 }
            }, "\(rows)")
        func row(_ release: String, _ version: String) throws -> [String: Any] {
            try #require(
                rows.first { $0["release"] as? String == release && $0["appVersion"] as? String == version }, "\(rows)")
        }
        // 5.2.1: both releases served it in the quarter-hour, so each has only its own batches; the clean
        // batches' 60 decodes are shared.
        let stable = try row(Self.stable, "5.2.1")
        #expect(stable["releaseBatches"] as? Int == 2)
        #expect(stable["releaseDecodes"] as? Int == 10)
        #expect(stable["sharedDecodes"] as? Int == 60)
        #expect(stable["releaseCleanRate"] as? Double == 0)
        #expect(stable["releaseDiagnosticsPerThousandDecodes"] as? Double == 300)
        let canary = try row(Self.canary, "5.2.1")
        #expect(canary["releaseBatches"] as? Int == 1)
        #expect(canary["releaseDecodes"] as? Int == 7)
        #expect(canary["sharedDecodes"] as? Int == 60)
        #expect(canary["releaseDiagnosticsPerThousandDecodes"] as? Double == 285.7143)
        // 5.3.0: the stable release alone served it, so the version's whole traffic is its own.
        let alone = try row(Self.stable, "5.3.0")
        #expect(alone["releaseBatches"] as? Int == 4)
        #expect(alone["releaseDecodes"] as? Int == 34)
        #expect(alone["releaseCleanRate"] as? Double == 0.75)
        #expect(alone["sharedDecodes"] as? Int == 0)
        #expect(alone["releaseDiagnosticsPerThousandDecodes"] as? Double == 29.4118)
    }
}
