import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

@Suite struct ModelTests {
    @Test func kindsAreAnOpenSetOfNonEmptyStrings() throws {
        #expect(DiagnosticKind(rawValue: "unknownType") == .unknownType)
        let newer = try #require(DiagnosticKind(rawValue: "unknownArrangement"))
        #expect(newer.rawValue == "unknownArrangement")
        #expect(!newer.isNamed && DiagnosticKind.duplicateID.isNamed)
        #expect(DiagnosticKind(rawValue: "") == nil)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([DiagnosticKind].self, from: Data(#"[""]"#.utf8))
        }
    }

    @Test func unknownBuildConfigurationMeansRelease() {
        #expect(BuildConfiguration(wireValue: "debug") == .debug)
        #expect(BuildConfiguration(wireValue: "staging") == .release)
        #expect(BuildConfiguration(wireValue: "Debug") == .release)
    }

    @Test func truncatesByUnicodeScalarsOnBothPaths() throws {
        #expect(FieldLimits.truncate("abcdef", to: 3) == "abc")
        #expect(FieldLimits.truncate("🇫🇷🇫🇷", to: 3).unicodeScalars.count == 3)
        #expect(FieldLimits.truncate("éé", to: 5) == "éé")
        let decoded = try FastBatchDecoder.decode(try Fixtures.bytes("hostile-huge-strings.json"))
        let event = try #require(decoded.batch.events.first)
        #expect(event.widgetType?.unicodeScalars.count == 128)
        #expect(event.codingPath?.unicodeScalars.count == 512)
        #expect(event.message == String(repeating: "é", count: 1024))
        #expect(event.pageID == String(repeating: "😀", count: 256))
    }

    @Test func codableEncodingRoundTrips() throws {
        for seed in 0..<20 as Range<UInt64> {
            let batch = SyntheticBatches.batchValue(seed: seed, events: 20)
            let data = try JSONEncoder().encode(batch)
            #expect(try JSONDecoder().decode(DiagnosticBatch.self, from: data) == batch)
            #expect(try FastBatchDecoder.decode(data).batch == batch)
        }
        let odd = DiagnosticBatch(
            client: ClientInfo(appID: "a\"\\", appVersion: "1", platform: "ios", buildConfiguration: .debug),
            events: [
                DiagnosticEvent(
                    kind: DiagnosticKind(rawValue: "new😀")!, message: "line\nbreak\u{0}", count: 7,
                    occurredAt: Timestamp(secondsSinceEpoch: -5, nanoseconds: 1))
            ])
        #expect(try FastBatchDecoder.decode(try JSONEncoder().encode(odd)).batch == odd)
    }

    @Test func decodableBatchDropsBadEventsSilently() throws {
        let data = Data(try Fixtures.bytes("contract-example-mixed.json"))
        #expect(try JSONDecoder().decode(DiagnosticBatch.self, from: data).events.count == 4)
    }
}
