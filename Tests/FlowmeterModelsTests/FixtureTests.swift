import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

@Suite struct FixtureTests {
    static func decode(_ name: String) throws -> DecodedBatch {
        try FastBatchDecoder.decode(try Fixtures.bytes(name))
    }

    static func error(_ name: String) throws -> BatchDecodingError {
        let bytes = try Fixtures.bytes(name)
        do throws(BatchDecodingError) {
            _ = try FastBatchDecoder.decode(bytes)
        } catch {
            return error
        }
        Issue.record("\(name) decoded")
        return BatchDecodingError(.init(rawValue: "none"), "", path: "")
    }

    @Test func resilienceExampleReportsThreeEventsForFiveWidgets() throws {
        let decoded = try Self.decode("resilience-example.json")
        #expect(decoded.dropped.isEmpty)
        let events = decoded.batch.events
        #expect(events.map(\.kind) == [.unknownType, .malformedPayload, .droppedElement])
        #expect(events[0].widgetType == "hologram_projector")
        #expect(events[1].message?.contains("Missing key 'imageURL'") == true)
        #expect(events[2].widgetType == nil)
        #expect(Set(events.compactMap(\.codingPath)).count == 3)
    }

    @Test(arguments: ["unknownType", "malformedPayload", "droppedElement", "duplicateID"])
    func eachNamedKindDecodes(kind: String) throws {
        let decoded = try Self.decode("kind-\(kind).json")
        #expect(decoded.batch.events.map(\.kind.rawValue) == [kind])
    }

    @Test func newerClientKeepsNewKindsAndIgnoresUnknownKeys() throws {
        let decoded = try Self.decode("newer-client.json")
        #expect(decoded.dropped.isEmpty)
        #expect(decoded.batch.events.map(\.kind.rawValue) == ["unknownArrangement", "unknownType"])
        #expect(decoded.batch.client.capabilities?.registeredTypes == ["title_block", "image_text_card"])
    }

    @Test func olderClientDecodesWithDefaults() throws {
        let batch = try Self.decode("older-client.json").batch
        #expect(batch.id == nil && batch.sentAt == nil && batch.client.capabilities == nil)
        #expect(batch.client.buildConfiguration == .release)
        #expect(batch.events.allSatisfy { $0.id == nil && $0.backendRelease == nil && $0.count == 1 })
        #expect(batch.events[0].occurredAt == Timestamp(rfc3339: "2026-11-30T08:59:58Z"))
    }

    @Test func contractExampleDropsTheEventWithoutKind() throws {
        let decoded = try Self.decode("contract-example-mixed.json")
        #expect(decoded.batch.events.count == 4)
        #expect(decoded.dropped == [DecodeDiagnostic(path: "events.Index 3", message: "Missing key 'kind'")])
        #expect(decoded.dropped[0].description == "Missing key 'kind' at events.Index 3")
    }

    @Test func badEventsAreDroppedWithReadableReasons() throws {
        let decoded = try Self.decode("hostile-wrong-event-types.json")
        #expect(decoded.batch.events.count == 1)
        #expect(
            decoded.dropped.map(\.message) == [
                "Expected String for 'widgetType' but found number",
                "Expected Int for 'count' but found string",
                "Invalid RFC 3339 time '2026-13-01T00:00:00Z' for 'occurredAt'",
                "Empty value for 'kind'",
                "Expected a positive count for 'count' but found 0",
                "Expected Int for 'count' but found number",
                "Expected String for 'kind' but found null",
                "Expected Object but found string",
                "Expected Object but found null",
                "Expected Object but found array",
                "Missing key 'occurredAt'",
                "Expected String for 'message' but found object",
            ])
        #expect(decoded.dropped.map(\.path).last == "events.Index 12")
    }

    @Test(arguments: [
        ("hostile-appID-wrong-type.json", "typeMismatch", "client", "Expected String for 'appID' but found number"),
        ("hostile-missing-appID.json", "missingKey", "client", "Missing key 'appID'"),
        ("hostile-events-not-array.json", "typeMismatch", "", "Expected Array for 'events' but found object"),
        ("hostile-missing-events.json", "missingKey", "", "Missing key 'events'"),
        ("hostile-not-object.json", "typeMismatch", "", "Expected Object but found array"),
        (
            "hostile-sent-at-invalid.json", "invalidValue", "",
            "Invalid RFC 3339 time '2026-02-30T00:00:00Z' for 'sentAt'"
        ),
        (
            "hostile-registered-type-wrong.json", "typeMismatch", "client.capabilities.registeredTypes.Index 1",
            "Expected String but found number"
        ),
    ])
    func batchLevelProblemsAreOneError(name: String, code: String, path: String, message: String) throws {
        let error = try Self.error(name)
        #expect(error.code.rawValue == code && error.path == path && error.message == message)
        #expect(!error.isRetriable)
    }

    @Test(arguments: [
        "hostile-truncated.json", "hostile-huge-number.json", "hostile-deep-nesting.json", "hostile-depth-513.json",
        "hostile-lone-surrogate.json", "hostile-empty.json", "hostile-invalid-utf8.bin",
        "hostile-invalid-utf8-unknown-key.bin",
    ])
    func invalidJSONIsRejected(name: String) throws {
        #expect(try Self.error(name).code == .invalidJSON)
    }

    @Test func edgeCasesFoundationAcceptsAreAccepted() throws {
        #expect(try Self.decode("hostile-depth-512.json").batch.events.count == 1)
        #expect(try Self.decode("hostile-trailing-commas.json").batch.events.count == 1)
        let duplicate = try Self.decode("hostile-duplicate-keys.json").batch.events[0]
        // First occurrence wins, as in JSONDecoder: `"kind": 5` and the later `"widgetType": "x"` are ignored.
        #expect(duplicate.kind == .unknownType && duplicate.widgetType == "second")
        let escaped = try Self.decode("hostile-escapes.json").batch.events[0]
        #expect(escaped.widgetType == "hé😀\"\\/")
        // Free text keeps control characters; identifiers may not hold them (IdentifierRuleTests).
        #expect(escaped.message == "hé😀\n\t\u{0}\"\\/")
        #expect(
            try Self.decode("hostile-huge-integer.json").dropped.map(\.message)
                == ["Expected Int for 'count' but found number"])
    }

    @Test func tenThousandDeepArraysFailWithoutRecursion() throws {
        let deep = Array(#"{"client":{},"x":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(throws: BatchDecodingError.self) { try FastBatchDecoder.decode(deep) }
    }
}
