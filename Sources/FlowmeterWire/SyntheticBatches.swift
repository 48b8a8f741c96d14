public import FlowmeterModels
import Foundation

/// Realistic, reproducible batch bodies for benchmarks and tests: the same seed always gives the same bytes.
///
/// A batch holds a seeded mix of kinds (mostly `unknownType`, some newer-client kinds), widget types (including a
/// few long-tail typos), app versions, pages and backend releases; 50 events come to about 12 KB.
public enum SyntheticBatches {
    /// One batch body as UTF-8 JSON.
    public static func batch(seed: UInt64, events eventCount: Int = 50) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        return Array(makeBatch(&random, eventCount: eventCount))
    }

    /// `count` batch bodies from one seed.
    public static func batches(count: Int, seed: UInt64, eventsPerBatch: Int = 50) -> [[UInt8]] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in Array(makeBatch(&random, eventCount: eventsPerBatch)) }
    }

    /// One batch as a value, before encoding.
    public static func batchValue(seed: UInt64, events eventCount: Int = 50) -> DiagnosticBatch {
        var random = SeededRandom(seed: seed)
        return makeValue(&random, eventCount: eventCount)
    }

    static let kinds: [DiagnosticKind] = [
        .unknownType, .unknownType, .unknownType, .malformedPayload, .malformedPayload, .droppedElement,
        .duplicateID, DiagnosticKind(rawValue: "unknownArrangement")!,
    ]
    static let widgetTypes = [
        "hologram_projector", "title_block", "image_text_card", "carousel_v2", "promo_banner", "video_tile",
        "countdown_timer", "product_grid", "imgae_text_card", "rating_stars", "map_snippet", "story_ring",
    ]
    static let versions = ["5.2.1", "5.2.0", "5.3.0", "5.10.0 (5210)", "5.9.2", "6.0.0-beta.3"]
    static let pages = ["home", "search", "product_detail", "cart", "checkout", "profile", "deals"]
    static let releases = ["page-api@2026.11.30-2", "page-api@2026.11.29-1", "layout-svc@1.42.0"]
    static let surfaces = ["page", "sheet", "tab", "modal"]

    static func makeValue(_ random: inout SeededRandom, eventCount: Int) -> DiagnosticBatch {
        let base = Int64(1_795_942_800) + Int64(random.next(below: 86_400))
        let client = ClientInfo(
            appID: random.next(below: 4) == 0 ? "com.example.reader" : "com.example.shop",
            appVersion: versions[random.next(below: versions.count)], build: String(5000 + random.next(below: 400)),
            platform: random.next(below: 3) == 0 ? "android" : "ios", osVersion: "18.\(random.next(below: 4))",
            sdkVersion: "1.4.\(random.next(below: 3))", installID: random.uuid(),
            buildConfiguration: random.next(below: 10) == 0 ? .debug : .release,
            unknownPolicy: random.next(below: 2) == 0 ? .skip : .placeholder,
            capabilities: Capabilities(
                maxSchemaVersion: 7, registeredTypes: Array(widgetTypes.prefix(3 + random.next(below: 5)))))
        var events: [DiagnosticEvent] = []
        events.reserveCapacity(eventCount)
        for _ in 0..<eventCount {
            let kind = kinds[random.next(below: kinds.count)]
            let type = widgetTypes[random.next(below: widgetTypes.count)]
            let section = random.next(below: 6)
            let widget = random.next(below: 12)
            let message: String
            switch kind {
            case .unknownType: message = "Unknown type '\(type)'"
            case .malformedPayload: message = "Missing key 'title'"
            case .droppedElement: message = "Element without a type"
            case .duplicateID: message = "Duplicate id 'w-\(widget)'"
            default: message = "Unknown arrangement 'masonry'"
            }
            events.append(
                DiagnosticEvent(
                    id: random.next(below: 10) < 6 ? random.uuid() : nil, kind: kind,
                    widgetType: kind == .droppedElement ? nil : type,
                    codingPath: "sections.Index \(section).widgets.Index \(widget)", message: message,
                    pageID: pages[random.next(below: pages.count)],
                    surface: random.next(below: 2) == 0 ? surfaces[random.next(below: 4)] : nil,
                    backendRelease: random.next(below: 10) < 4 ? releases[random.next(below: releases.count)] : nil,
                    count: 1 + (random.next(below: 8) == 0 ? random.next(below: 20) : 0),
                    occurredAt: Timestamp(
                        secondsSinceEpoch: base - Int64(random.next(below: 600)),
                        nanoseconds: Int32(random.next(below: 1000)) * 1_000_000)))
        }
        return DiagnosticBatch(
            id: random.uuid(), sentAt: Timestamp(secondsSinceEpoch: base, nanoseconds: 250_000_000), client: client,
            decodes: 50 + random.next(below: 400), events: events)
    }

    static func makeBatch(_ random: inout SeededRandom, eventCount: Int) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding a value built from plain strings cannot fail.
        return try! encoder.encode(makeValue(&random, eventCount: eventCount))
    }
}
