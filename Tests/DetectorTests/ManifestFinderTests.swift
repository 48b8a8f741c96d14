import Detector
import FlowmeterModels
import Rollups
import Testing

/// The finders read capability manifests first (docs/api.md#capability-manifests): where a version uploaded one, it
/// decides what the version renders, over the capabilities it sends and over what its traffic implies; and traffic that
/// contradicts a manifest is drift.
@Suite struct ManifestFinderTests {
    let from = History.time("2026-11-30T06:00:00Z")
    let to = History.time("2026-11-30T10:00:00Z")
    let at = History.time("2026-11-30T08:47:00Z")

    static func shape(_ required: [String] = [], optional: [String] = []) -> CapabilityManifest.TypeShape {
        CapabilityManifest.TypeShape(required: required, optional: optional)
    }

    /// Versions without capabilities: by traffic alone 5.3.0 would render the type (it never complained, because it
    /// was never sent the type), and the gate would be 5.3.0; its manifest says it lacks the type, so the gate is
    /// 5.4.0.
    @Test func ungatedRenderingVersionsAndGateComeFromManifestsFirst() throws {
        let history = History()
        for version in ["5.2.1", "5.3.0", "5.4.0"] { history.traffic(version: version, at: at, installs: 20) }
        history.events(40, type: "hologram_projector", version: "5.2.1", at: at, installs: 10)
        let byTraffic = try #require(
            try UngatedTypeFinder().report(reader: history.store, from: from, to: to).ungated.first)
        #expect(byTraffic.renderingVersions == ["5.3.0", "5.4.0"])
        #expect(byTraffic.suggestedMinAppVersion == "5.3.0")

        history.manifest(version: "5.3.0", types: ["title_block": Self.shape(["title"])])
        history.manifest(
            version: "5.4.0", types: ["title_block": Self.shape(["title"]), "hologram_projector": Self.shape()])
        let found = try #require(
            try UngatedTypeFinder().report(reader: history.store, from: from, to: to).ungated.first)
        #expect(found.renderingVersions == ["5.4.0"])
        #expect(found.suggestedMinAppVersion == "5.4.0")
    }

    /// A manifest wins over the capabilities the same version sends, and a version without a manifest still falls
    /// back to its capabilities.
    @Test func aManifestOverridesCapabilitiesOnlyForItsVersion() throws {
        let history = History()
        history.traffic(version: "5.2.1", at: at, installs: 20, registered: ["title_block"])
        history.traffic(version: "5.3.0", at: at, registered: ["title_block", "hologram_projector"])
        history.traffic(version: "5.4.0", at: at, registered: ["title_block", "hologram_projector"])
        history.events(40, type: "hologram_projector", version: "5.2.1", at: at, installs: 10)
        // 5.3.0's build registered the type behind a feature flag that is off: its manifest leaves it out.
        history.manifest(version: "5.3.0", types: ["title_block": Self.shape()])
        let found = try #require(
            try UngatedTypeFinder().report(reader: history.store, from: from, to: to).ungated.first)
        #expect(found.renderingVersions == ["5.4.0"])
        #expect(found.suggestedMinAppVersion == "5.4.0")
    }

    /// Types that only manifests name are known types, so a misspelling of one is recognised.
    @Test func manifestTypesAreKnownForTypos() throws {
        let history = History()
        history.traffic(version: "5.2.1", at: at)
        history.events(25, type: "imgae_text_card", version: "5.2.1", at: at, installs: 6)
        history.manifest(version: "5.2.1", types: ["image_text_card": Self.shape(["title"])])
        let found = try #require(
            try UngatedTypeFinder().report(reader: history.store, from: from, to: to).ungated.first)
        #expect(found.renderingVersions.isEmpty)
        #expect(found.likelyTypoOf == "image_text_card")
    }

    /// Gates: versions that send no capabilities are left out, unless a manifest says what they render.
    @Test func gatesReadManifests() throws {
        let history = History()
        let day0 = History.time("2026-11-01T00:00:00Z")
        for day in Int64(0)..<3 {
            let time = day0.adding(seconds: day * 86_400 + 3600)
            history.traffic(version: "5.2.0", at: time, installs: 40)
            history.traffic(version: "5.3.0", at: time, installs: 60)
        }
        let end = day0.adding(seconds: 3 * 86_400)
        #expect(try GateFinder().report(reader: history.store, from: day0, to: end).gates.isEmpty)
        history.manifest(version: "5.2.0", types: ["title_block": Self.shape()])
        history.manifest(version: "5.3.0", types: ["title_block": Self.shape(), "story_ring": Self.shape()])
        let gate = try #require(try GateFinder().report(reader: history.store, from: day0, to: end).gates.first)
        #expect(gate.widgetType == "story_ring")
        #expect(gate.minAppVersion == "5.3.0")
        #expect(gate.renderingVersions == ["5.3.0"])
        #expect(gate.missingVersions == ["5.2.0"])
        #expect(abs(gate.belowShare - 0.4) < 0.05)
    }

    /// One version's manifests combine cautiously: a type every platform lists, keys required anywhere.
    @Test func aVersionsManifestsCombineCautiously() throws {
        let ios = CapabilityManifest(
            appID: "a", appVersion: "5.3.0", platform: "ios", build: "1",
            types: ["card": Self.shape(["title"], optional: ["kicker"]), "ring": Self.shape()],
            arrangements: ["vertical", "grid"])
        let android = CapabilityManifest(
            appID: "a", appVersion: "5.3.0", platform: "android",
            types: ["card": Self.shape(["title", "kicker"], optional: ["badge"])], arrangements: ["vertical"])
        let index = ManifestIndex(manifests: [ios, android])
        let shape = try #require(index.shape(appID: "a", appVersion: "5.3.0"))
        #expect(shape.types.keys.sorted() == ["card"])
        #expect(shape.types["card"] == Self.shape(["kicker", "title"], optional: ["badge"]))
        #expect(shape.arrangements == ["vertical"])
        #expect(index.platforms["a"]?["5.3.0"]?["ios"]?.renders("ring") == true)
        #expect(index.renderedTypes.types == ["a": ["5.3.0": ["card"]]])
    }

    @Test func trafficThatContradictsAManifestIsDrift() throws {
        let history = History()
        history.manifest(
            version: "5.3.0", build: "5300",
            types: [
                "image_text_card": Self.shape(["title"], optional: ["imageURL", "badges[].label"]),
                "hologram_projector": Self.shape(),
            ])
        history.manifest(version: "5.2.1", types: ["image_text_card": Self.shape(["title", "imageURL"])])
        // Lists hologram_projector, yet reports it unknown: the manifest is out of date.
        history.events(7, type: "hologram_projector", version: "5.3.0", at: at)
        // imageURL is optional in 5.3.0's manifest, yet its absence breaks the card; `label` nested, too.
        history.events(
            5, kind: .malformedPayload, type: "image_text_card", version: "5.3.0", at: at,
            messages: ["Missing key 'imageURL'", "Missing key 'label'", "Expected String for 'title' but found Int"])
        // A key no manifest names, in Swift's own words.
        history.events(
            2, kind: .malformedPayload, type: "image_text_card", version: "5.3.0", at: at.adding(seconds: 60),
            messages: [#"No value associated with key CodingKeys(stringValue: "price", intValue: nil) ("price")."#])
        // What the manifests predict is no drift: 5.2.1 requires imageURL, and does not list hologram_projector.
        history.events(
            9, kind: .malformedPayload, type: "image_text_card", version: "5.2.1", at: at,
            messages: ["Missing key 'imageURL'"])
        history.events(30, type: "hologram_projector", version: "5.2.1", at: at)
        // Other platforms, debug builds and versions without a manifest say nothing about these manifests.
        history.events(3, type: "hologram_projector", version: "5.3.0", at: at, platform: "android")
        history.events(3, type: "hologram_projector", version: "5.3.0", at: at, build: .debug)
        history.events(3, type: "hologram_projector", version: "5.4.0", at: at)

        let report = try ManifestDriftFinder().report(reader: history.store, from: from, to: to)
        #expect(report.manifestCount == 2)
        #expect(report.exitStatus == 3)
        let found = report.drift.map {
            "\($0.appVersion) \($0.widgetType) \($0.key ?? "-") \($0.reason.rawValue) \($0.events)"
        }
        #expect(
            found == [
                "5.3.0 hologram_projector - listedTypeUnknown 7",
                "5.3.0 image_text_card imageURL optionalKeyRequired 5",
                "5.3.0 image_text_card label optionalKeyRequired 5",
                "5.3.0 image_text_card price unlistedKeyRequired 2",
            ])
        #expect(report.drift.first?.builds == ["5300"])
        #expect(report.drift.first?.platform == "ios")
        let json = report.jsonValue.serialized()
        #expect(json.contains(#""reason":"listedTypeUnknown""#))
        #expect(json.contains(#""key":null"#))
    }

    @Test func noManifestsNoDrift() throws {
        let history = History()
        history.events(30, type: "hologram_projector", version: "5.2.1", at: at)
        let report = try ManifestDriftFinder().report(reader: history.store, from: from, to: to)
        #expect(report.drift.isEmpty && report.exitStatus == 0 && report.manifestCount == 0)
    }

    @Test(
        arguments: [
            ("Missing key 'imageURL'", "imageURL"),
            (#"keyNotFound: No value associated with key CodingKeys(stringValue: "title", intValue: nil)"#, "title"),
            ("Expected String for 'title' but found Int", nil), ("Missing key ''", nil),
        ] as [(String, String?)])
    func missingKeysAreReadFromMessages(message: String, key: String?) {
        #expect(ManifestDriftFinder.missingKey(in: message) == key)
    }
}
