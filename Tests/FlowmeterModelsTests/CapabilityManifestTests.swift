import Foundation
import Testing

@testable import FlowmeterModels

/// Capability manifests (docs/api.md#capability-manifests): the contract's example decodes, every required field is
/// required, names follow the identifier rule, key paths are well formed, and a manifest over a limit is refused whole
/// with a clear error.
@Suite struct CapabilityManifestTests {
    static let example = #"""
        {"appID": "com.example.shop", "appVersion": "5.3.0", "platform": "ios", "build": "5300",
         "types": {"image_text_card": {"required": ["title"], "optional": ["imageURL", "kicker"]},
                   "accordion": {"required": ["children"], "optional": []}},
         "arrangements": ["vertical", "horizontal", "grid"]}
        """#

    static func decode(_ text: String, limits: ManifestLimits = ManifestLimits()) throws(ManifestError)
        -> CapabilityManifest
    {
        try CapabilityManifest(jsonBytes: Array(text.utf8), limits: limits)
    }

    static func error(_ text: String, limits: ManifestLimits = ManifestLimits()) -> ManifestError? {
        do {
            _ = try decode(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func decodesTheContractExample() throws {
        let manifest = try Self.decode(Self.example)
        #expect(manifest.appID == "com.example.shop")
        #expect(manifest.appVersion == "5.3.0")
        #expect(manifest.platform == "ios")
        #expect(manifest.build == "5300")
        #expect(manifest.types["image_text_card"] == .init(required: ["title"], optional: ["imageURL", "kicker"]))
        #expect(manifest.types["accordion"]?.required == ["children"])
        #expect(manifest.arrangements == ["grid", "horizontal", "vertical"])
        #expect(
            manifest.identity == .init(appID: "com.example.shop", appVersion: "5.3.0", platform: "ios", build: "5300"))
    }

    @Test func roundTripsThroughItsJSON() throws {
        var manifest = try Self.decode(Self.example)
        manifest.uploadedAt = Timestamp(secondsSinceEpoch: 1_800_000_000, nanoseconds: 5_000_000)
        let again = try CapabilityManifest(jsonBytes: manifest.jsonBytes())
        #expect(again == manifest)
        // Keys sorted: the same manifest always has the same bytes.
        #expect(again.jsonBytes() == manifest.jsonBytes())
    }

    @Test func buildAndArrangementsAreOptionalAndUnknownKeysIgnored() throws {
        let manifest = try Self.decode(
            #"{"appID":"a","appVersion":"1.0","platform":"android","types":{"t":{"required":["x"]}},"extra":[1]}"#)
        #expect(manifest.build == nil)
        #expect(manifest.arrangements == nil)
        #expect(manifest.types["t"] == .init(required: ["x"], optional: []))
        #expect(manifest.identity.build == "")
    }

    @Test(arguments: [
        (#"{"appVersion":"1","platform":"ios","types":{}}"#, "appID"),
        (#"{"appID":"a","platform":"ios","types":{}}"#, "appVersion"),
        (#"{"appID":"a","appVersion":"1","types":{}}"#, "platform"),
        (#"{"appID":"a","appVersion":"1","platform":"ios"}"#, "types"),
        (#"{"appID":"a","appVersion":"1","platform":"ios","types":null}"#, "types"),
    ])
    func requiresItsFields(body: String, field: String) throws {
        let error = try #require(Self.error(body))
        #expect(error.code == .invalid)
        #expect(error.message == "Missing key '\(field)'")
        #expect(error.path == field)
    }

    @Test(arguments: [
        (#"[1]"#, "", "A manifest is a JSON object"),
        (#"{"appID":"#, "", "The manifest is not valid JSON"),
        (#"{"appID":7,"appVersion":"1","platform":"ios","types":{}}"#, "appID", "Expected a string for 'appID'"),
        (#"{"appID":"a","appVersion":"1","platform":"ios","types":[]}"#, "types", "Expected an object of widget types"),
        (#"{"appID":"a","appVersion":"1","platform":"ios","types":{"t":["x"]}}"#, "types.t", "Expected an object"),
        (
            #"{"appID":"a","appVersion":"1","platform":"ios","types":{"t":{"required":"x"}}}"#, "types.t.required",
            "Expected an array of keys"
        ),
        (
            #"{"appID":"a","appVersion":"1","platform":"ios","types":{"t":{"required":["x", 3]}}}"#,
            "types.t.required.Index 1", "Expected a string key"
        ),
        (
            #"{"appID":"a","appVersion":"1","platform":"ios","types":{"t":{"required":["x"],"optional":["x"]}}}"#,
            "types.t", "Key 'x' is both required and optional"
        ),
        (
            #"{"appID":"a","appVersion":"1","platform":"ios","types":{"t":{"required":["items[].[]"]}}}"#,
            "types.t.required.Index 0", "Key 'items[].[]' has an empty segment"
        ),
        (
            #"{"appID":"a","appVersion":"1","platform":"ios","types":{"t":{"required":["a[0].b"]}}}"#,
            "types.t.required.Index 0", "Key 'a[0].b' has '[' or ']'"
        ),
        (
            #"{"appID":"a","appVersion":"1","platform":"ios","types":{},"arrangements":"grid"}"#, "arrangements",
            "Expected an array of names"
        ),
        (
            #"{"appID":"a","appVersion":"1","platform":"ios","types":{},"uploadedAt":"yesterday"}"#, "uploadedAt",
            "Expected an RFC 3339 time"
        ),
    ])
    func refusesWrongShapes(body: String, path: String, message: String) throws {
        let error = try #require(Self.error(body))
        #expect(error.code == .invalid)
        #expect(error.path == path)
        #expect(error.message.hasPrefix(message), "\(error.message)")
    }

    /// Every name is an identifier (the hostile-input rule): control characters and blank names are refused
    /// wherever they are, and the message names the field rather than echoing the value.
    @Test(arguments: ["\u{0}", "a\u{1B}[31m", "   ", "", "x\u{85}y"])
    func refusesHostileNames(value: String) throws {
        let escaped = String(
            decoding: try JSONSerialization.data(withJSONObject: [value], options: .fragmentsAllowed), as: UTF8.self
        )
        .dropFirst().dropLast()
        let bodies = [
            (#"{"appID":\#(escaped),"appVersion":"1","platform":"ios","types":{}}"#, "appID"),
            (#"{"appID":"a","appVersion":\#(escaped),"platform":"ios","types":{}}"#, "appVersion"),
            (#"{"appID":"a","appVersion":"1","platform":\#(escaped),"types":{}}"#, "platform"),
            (#"{"appID":"a","appVersion":"1","platform":"ios","build":\#(escaped),"types":{}}"#, "build"),
            (#"{"appID":"a","appVersion":"1","platform":"ios","types":{\#(escaped):{}}}"#, "widget type"),
            (#"{"appID":"a","appVersion":"1","platform":"ios","types":{"t":{"optional":[\#(escaped)]}}}"#, "key"),
            (
                #"{"appID":"a","appVersion":"1","platform":"ios","types":{},"arrangements":[\#(escaped)]}"#,
                "arrangement"
            ),
        ]
        for (body, field) in bodies {
            let error = try #require(Self.error(body), "accepted \(field) = \(value.debugDescription)")
            #expect(error.code == .invalid)
            #expect(error.message.contains("'\(field)'"), "\(error.message)")
            #expect(!error.message.contains("\u{1B}") && !error.message.contains("\u{0}"))
        }
        // Read back from a store, names are taken as they were written.
        let stored = #"{"appID":"a","appVersion":"1","platform":"ios","types":{\#(escaped):{}}}"#
        #expect(try CapabilityManifest(jsonBytes: Array(stored.utf8), checkingIdentifiers: false).types.count == 1)
    }

    @Test func refusesManifestsOverEachLimit() throws {
        var limits = ManifestLimits()
        limits.maxTypes = 3
        limits.maxKeysPerType = 4
        limits.maxKeys = 6
        limits.maxArrangements = 2
        limits.maxKeyDepth = 3
        limits.maxBytes = 400
        func types(_ count: Int, keys: Int) -> String {
            (0..<count).map { type in
                #""t\#(type)":{"required":[\#((0..<keys).map { #""k\#($0)""# }.joined(separator: ","))]}"#
            }.joined(separator: ",")
        }
        let cases: [(String, String, String)] = [
            (types(4, keys: 0), "", "4 widget types; the limit is 3"),
            (types(1, keys: 5), "", "5 keys; the limit is 4 per type"),
            (types(2, keys: 4), "", "more than 6 keys over all types"),
            (#""t":{"required":["a.b.c.d"]}"#, "", "nests 4 levels; the limit is 3"),
            (#""t":{}},"arrangements":["a","b","c"],"x":{"#, "", "3 arrangements; the limit is 2"),
            (#""\#(String(repeating: "w", count: 129))":{}"#, "", "129 characters; the limit is 128"),
        ]
        for (inner, _, message) in cases {
            let body = #"{"appID":"a","appVersion":"1","platform":"ios","types":{\#(inner)}}"#
            let error = try #require(Self.error(body, limits: limits), "accepted \(body)")
            #expect(error.code == .tooLarge)
            #expect(error.message.contains(message), "\(error.message)")
        }
        let huge = #"{"appID":"a","appVersion":"1","platform":"ios","types":{\#(types(3, keys: 40))}}"#
        let error = try #require(Self.error(huge, limits: limits))
        #expect(error.code == .tooLarge)
        #expect(error.message.contains("bytes; the limit is 400 bytes"))
        // The default limits hold a big app: 300 types of 20 keys each.
        let big = #"{"appID":"a","appVersion":"1","platform":"ios","types":{\#(types(300, keys: 20))}}"#
        #expect(try Self.decode(big).types.count == 300)
    }

    @Test func keyPathsParseAndNest() throws {
        let path = try #require(ManifestKeyPath("items[].title"))
        #expect(path.segments == [.init(name: "items", isArray: true), .init(name: "title")])
        #expect(path.description == "items[].title")
        #expect(path.parent == ManifestKeyPath("items[]"))
        #expect(path.isWithin(try #require(ManifestKeyPath("items"))))
        #expect(path.isWithin(try #require(ManifestKeyPath("items[]"))))
        let items = try #require(ManifestKeyPath("items"))
        #expect(!items.isWithin(try #require(ManifestKeyPath("items[]"))))
        #expect(ManifestKeyPath("a..b") == nil)
        #expect(ManifestKeyPath("") == nil)
        #expect(ManifestKeyPath("[]") == nil)
    }
}
