import FlowmeterModels
import Foundation
import TestSupport
import Testing

@testable import Rollups

@Suite struct PartialRollupTests {
    typealias F = RollupFixtures

    @Test(arguments: 0..<20)
    func seriesMessagesRoundTrip(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        let partial = PartialRollup(
            id: "collector-a-0f/\(seed)/3", collector: "collector-a", rollup: .series(F.seriesRollup(&random)))
        let decoded = try PartialRollup(jsonBytes: partial.jsonBytes())
        #expect(decoded == partial)
    }

    @Test(arguments: 0..<20)
    func versionMessagesRoundTrip(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &+ 1000)
        let partial = PartialRollup(
            id: "collector-a-0f/\(seed)/0", collector: "collector-a", rollup: .version(F.versionRollup(&random)))
        #expect(try PartialRollup(jsonBytes: partial.jsonBytes()) == partial)
    }

    @Test func jsonHasThePagesShape() throws {
        var installs = HyperLogLog()
        installs.insert(installHash: "0123456789abcdef0123456789abcdef")
        let rollup = SeriesRollup(
            series: F.series, window: F.window, events: 3, installs: installs,
            firstSeen: Timestamp(rfc3339: "2025-11-30T09:59:01Z")!,
            lastSeen: Timestamp(rfc3339: "2025-11-30T09:59:30.5Z")!,
            releases: ["page-api@2026.11.30-2": 3],
            samples: [RollupSample(codingPath: "page.sections.Index 0", message: "m", pageID: "home")])
        let bytes = PartialRollup(id: "c-1/0/0", collector: "c", rollup: .series(rollup)).jsonBytes()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["id"] as? String == "c-1/0/0")
        #expect(object["collector"] as? String == "c")
        #expect(object["type"] as? String == "series")
        let body = try #require(object["rollup"] as? [String: Any])
        #expect(body["window"] as? Int == Int(F.window.start))
        #expect(body["events"] as? Int == 3)
        #expect(body["firstSeen"] as? String == "2025-11-30T09:59:01Z")
        let base64 = try #require(body["installs"] as? String)
        #expect(Data(base64Encoded: base64).map { [UInt8]($0) } == installs.serialized())
        let series = try #require(body["series"] as? [String: Any])
        #expect(series["kind"] as? String == "unknownType")
        #expect(series["buildConfiguration"] as? String == "release")
        let samples = try #require(body["samples"] as? [[String: Any]])
        #expect(samples.first?["codingPath"] as? String == "page.sections.Index *")
    }

    @Test func kafkaKeysNameTheSeriesOrVersionAndWindow() {
        var random = SeededGenerator(seed: 1)
        let series = PartialRollup(id: "x", collector: "c", rollup: .series(F.seriesRollup(&random)))
        #expect(
            String(decoding: series.kafkaKey, as: UTF8.self)
                == #"["com.example.shop","unknownType","hologram_projector"]|1764493140"#)
        var untyped = F.seriesRollup(&random)
        untyped.series.widgetType = ""
        #expect(
            String(decoding: PartialRollup(id: "x", collector: "c", rollup: .series(untyped)).kafkaKey, as: UTF8.self)
                == #"["com.example.shop","unknownType",null]|1764493140"#)
        let version = PartialRollup(id: "y", collector: "c", rollup: .version(F.versionRollup(&random)))
        #expect(
            String(decoding: version.kafkaKey, as: UTF8.self)
                == #"["com.example.shop","ios","5.2.1","release"]|1764493140"#)
    }

    @Test func decodingBoundsForeignReleasesAndSamples() throws {
        var random = SeededGenerator(seed: 2)
        let rollup = F.seriesRollup(&random)
        var json = String(
            decoding: PartialRollup(id: "x", collector: "c", rollup: .series(rollup)).jsonBytes(), as: UTF8.self)
        let many = (0..<40).map { "\"r\($0)\":\($0 + 1)" }.joined(separator: ",")
        let releasesRange = try #require(json.range(of: #""releases":\{[^}]*\}"#, options: .regularExpression))
        json.replaceSubrange(releasesRange, with: "\"releases\":{\(many)}")
        let decoded = try PartialRollup(jsonBytes: Array(json.utf8))
        guard case .series(let bounded) = decoded.rollup else { Issue.record("not a series"); return }
        #expect(bounded.releases.count == SeriesRollup.maxReleases)
        #expect(bounded.releases["r39"] == 40)
    }

    static let badMessages: [String] = [
        "",
        "null",
        "[]",
        "{",
        #"{"id":"x","collector":"c","type":"series"}"#,
        #"{"id":"x","collector":"c","type":"bogus","rollup":{}}"#,
        #"{"collector":"c","type":"version","rollup":{}}"#,
        #"{"id":"x","collector":"c","type":"version","rollup":{"key":{"appID":"a"}}}"#,
        #"{"id":"x","collector":"c","type":"version","rollup":{"key":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release"},"window":61,"batches":1,"cleanBatches":0,"decodes":0,"installs":"AQAMAAA=","registeredTypes":[]}}"#,
        #"{"id":"x","collector":"c","type":"version","rollup":{"key":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release"},"window":60,"batches":1,"cleanBatches":0,"decodes":0,"installs":"!!!","registeredTypes":[]}}"#,
        #"{"id":"x","collector":"c","type":"version","rollup":{"key":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release"},"window":60,"batches":-1,"cleanBatches":0,"decodes":0,"installs":"AQAMAAA=","registeredTypes":[]}}"#,
        #"{"id":"x","collector":"c","type":"version","rollup":{"key":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release"},"window":60,"batches":1,"cleanBatches":0,"decodes":0,"installs":"AgAMAAA=","registeredTypes":[]}}"#,
        #"{"id":"x","collector":"c","type":"series","rollup":{"series":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release","kind":"","widgetType":""},"window":60,"events":1,"installs":"AQAMAAA=","firstSeen":"2025-01-01T00:00:00Z","lastSeen":"2025-01-01T00:00:00Z"}}"#,
        #"{"id":"x","collector":"c","type":"series","rollup":{"series":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release","kind":"k","widgetType":""},"window":60,"events":1,"installs":"AQAMAAA=","firstSeen":"2025-01-01T00:00:09Z","lastSeen":"2025-01-01T00:00:00Z"}}"#,
        #"{"id":"x","collector":"c","type":"series","rollup":{"series":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release","kind":"k","widgetType":""},"window":60,"events":1e400,"installs":"AQAMAAA=","firstSeen":"2025-01-01T00:00:00Z","lastSeen":"2025-01-01T00:00:00Z"}}"#,
    ]

    @Test(arguments: badMessages)
    func badMessagesThrowInsteadOfTrapping(message: String) {
        #expect(throws: RollupsError.self) { try PartialRollup(jsonBytes: Array(message.utf8)) }
    }

    @Test func aMinimalValidMessageDecodes() throws {
        let json =
            #"{"id":"x","collector":"c","type":"version","rollup":{"key":{"appID":"a","platform":"p","appVersion":"1","buildConfiguration":"release"},"window":60,"batches":1,"cleanBatches":0,"decodes":0,"installs":"AQAMAAA=","registeredTypes":[]}}"#
        let partial = try PartialRollup(jsonBytes: Array(json.utf8))
        #expect(partial.rollup.window == MinuteWindow(start: 60))
    }

    @Test func mutatedMessagesNeverTrap() {
        var random = SeededGenerator(seed: 31)
        let original = PartialRollup(
            id: "x", collector: "c", rollup: .series(F.seriesRollup(&random))
        ).jsonBytes()
        for _ in 0..<2_000 {
            var bytes = original
            for _ in 0..<Int(random.next() % 4 + 1) {
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: random.next())
            }
            if random.next() % 4 == 0 { bytes.removeLast(Int(random.next() % UInt64(bytes.count))) }
            _ = try? PartialRollup(jsonBytes: bytes)
        }
    }
}
