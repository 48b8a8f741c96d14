import Foundation
import Testing

@testable import FlowmeterModels

/// The generator apps run in their build: a content type's `decode` calls are its required keys, its
/// `decodeIfPresent` calls its optional ones, nested content gives dotted paths, and content that cannot run on
/// placeholders says so instead of producing a short list.
@Suite struct ManifestBuilderTests {
    struct Badge: Decodable {
        let label: String
        let color: String?
    }

    struct Header: Decodable {
        let title: String
        let subtitle: String?
    }

    enum Emphasis: String, Decodable, CaseIterable {
        case quiet, loud
    }

    /// Content as Flow-UI apps write it: synthesized and hand-written conformances, leaves, arrays, nesting.
    struct ImageTextCard: Decodable {
        let title: String
        let imageURL: URL
        let kicker: String?
        let publishedAt: Date?
        let rating: Double
        let badges: [Badge]?
        let header: Header?
        let tags: [String]
        let emphasis: Emphasis?
    }

    struct HandWritten: Decodable {
        let count: Int
        let note: String?

        enum CodingKeys: String, CodingKey { case count = "item_count", note, details }
        enum DetailKeys: String, CodingKey { case depth }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            count = try container.decode(Int.self, forKey: .count)
            note = try container.decodeIfPresent(String.self, forKey: .note)
            let details = try container.nestedContainer(keyedBy: DetailKeys.self, forKey: .details)
            _ = try details.decode(Int.self, forKey: .depth)
        }
    }

    struct Accordion: Decodable {
        let children: [Node]
        let title: String?
    }

    /// Recursive content: learned to the depth limit, no further.
    struct Node: Decodable {
        let label: String
        let children: [Node]?
    }

    struct Validating: Decodable {
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            let url = try container.decode(String.self, forKey: .link)
            guard url.hasPrefix("https://") else {
                throw DecodingError.dataCorruptedError(forKey: .link, in: container, debugDescription: "not https")
            }
        }
        enum Keys: CodingKey { case link }
    }

    struct Declared: Decodable, ManifestKeysProviding {
        static let manifestShape = CapabilityManifest.TypeShape(required: ["link"], optional: ["label"])
        init(from decoder: any Decoder) throws {
            throw DecodingError.valueNotFound(String.self, .init(codingPath: [], debugDescription: "never"))
        }
    }

    @Test func learnsRequiredAndOptionalKeysFromTheDecoder() throws {
        let shape = try ManifestBuilder.shape(of: ImageTextCard.self)
        // Nested keys of an optional parent keep their own kind: a badge needs a label whenever there are badges.
        #expect(shape.required == ["badges[].label", "header.title", "imageURL", "rating", "tags", "title"])
        #expect(
            shape.optional == [
                "badges", "badges[].color", "emphasis", "header", "header.subtitle", "kicker", "publishedAt",
            ])
        let hand = try ManifestBuilder.shape(of: HandWritten.self)
        #expect(hand.required == ["details", "details.depth", "item_count"])
        #expect(hand.optional == ["note"])
    }

    @Test func recursiveContentStopsAtTheDepthLimit() throws {
        let shape = try ManifestBuilder.shape(of: Accordion.self)
        #expect(shape.required.contains("children"))
        #expect(shape.required.contains("children[].label"))
        #expect(shape.optional.contains("title"))
        let deepest = shape.allKeys.map { $0.split(separator: ".").count }.max() ?? 0
        #expect(deepest == ManifestLimits().maxKeyDepth)
    }

    @Test func contentThatRejectsPlaceholdersMustDeclareItsKeys() throws {
        #expect(throws: ManifestError.self) { try ManifestBuilder.shape(of: Validating.self) }
        #expect(try ManifestBuilder.shape(of: Declared.self) == Declared.manifestShape)
    }

    @Test func buildsAValidatedManifest() throws {
        var builder = ManifestBuilder(appID: "com.example.shop", appVersion: "5.3.0", platform: "ios", build: "5300")
        try builder.register("image_text_card", content: ImageTextCard.self)
        builder.register("spacer", required: [], optional: ["height"])
        builder.arrangements = ["vertical", "grid", "vertical"]
        let manifest = try builder.manifest()
        #expect(manifest.types.keys.sorted() == ["image_text_card", "spacer"])
        #expect(manifest.arrangements == ["grid", "vertical"])
        #expect(try CapabilityManifest(jsonBytes: manifest.jsonBytes()) == manifest)

        var hostile = builder
        hostile.register("bad\u{1B}type", required: ["x"])
        #expect(throws: ManifestError.self) { try hostile.manifest() }
    }
}
