import FlowmeterModels
import Foundation
import Rollups
import TestSupport
import Testing

@testable import RollupStore

/// Capability manifests in every store (docs/api.md#capability-manifests): one per app id, app version, platform and build; an upload of
/// the same build replaces the earlier one, a replayed older one never undoes a newer; the list comes in one order.
@Suite struct ManifestStoreTests {
    static func manifest(
        app: String = "com.example.shop", version: String, platform: String = "ios", build: String? = nil,
        types: [String: CapabilityManifest.TypeShape] = ["title_block": .init(required: ["title"])],
        uploadedAt seconds: Int64 = 1_000, nanoseconds: Int32 = 0
    ) -> CapabilityManifest {
        CapabilityManifest(
            appID: app, appVersion: version, platform: platform, build: build, types: types,
            arrangements: ["vertical", "grid"],
            uploadedAt: Timestamp(secondsSinceEpoch: seconds, nanoseconds: nanoseconds))
    }

    @Test(arguments: StoreKind.allCases)
    func manifestsRoundTripInOneOrder(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let manifests = [
            Self.manifest(version: "5.10.0", build: "5100"),
            Self.manifest(version: "5.9.2"),
            Self.manifest(version: "5.9.2", build: "5921"),
            Self.manifest(version: "5.9.2", platform: "android"),
            Self.manifest(app: "com.example.reader", version: "3.4.0"),
            Self.manifest(
                version: "5.2.1", build: "5210",
                types: [
                    "image_text_card": .init(required: ["imageURL", "title"], optional: ["kicker", "badges[].label"]),
                    "accordion": .init(required: ["children"]),
                ]),
        ]
        for manifest in manifests.reversed() { try fixture.store.recordManifest(manifest) }
        let expected = [manifests[4], manifests[5], manifests[3], manifests[1], manifests[2], manifests[0]]
        #expect(try fixture.store.manifests(appID: nil) == expected)
        #expect(try fixture.store.manifests(appID: "com.example.reader") == [manifests[4]])
        #expect(try fixture.store.manifests(appID: "com.example.none").isEmpty)
        if kind.isSQL {
            #expect(try fixture.reopen().manifests(appID: nil) == expected)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aLaterUploadOfTheSameBuildReplacesAnEarlierOneNeverTheReverse(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let first = Self.manifest(version: "5.3.0", build: "5300", uploadedAt: 1_000)
        var second = Self.manifest(
            version: "5.3.0", build: "5300", types: ["hologram_projector": .init(optional: ["depth"])],
            uploadedAt: 1_000, nanoseconds: 5)
        try fixture.store.recordManifest(first)
        try fixture.store.recordManifest(second)
        #expect(try fixture.store.manifests(appID: nil) == [second])
        // A replay of the first upload (a sink reading the topic again) leaves the newer one.
        try fixture.store.recordManifest(first)
        #expect(try fixture.store.manifests(appID: nil) == [second])
        // The same time again replaces: uploading the same bytes twice is harmless.
        second.arrangements = ["vertical"]
        try fixture.store.recordManifest(second)
        #expect(try fixture.store.manifests(appID: nil) == [second])
        // Another build of the same version is a manifest of its own.
        let hotfix = Self.manifest(version: "5.3.0", build: "5301", uploadedAt: 900)
        try fixture.store.recordManifest(hotfix)
        #expect(try fixture.store.manifests(appID: nil) == [second, hotfix])
    }

    @Test(arguments: [StoreKind.sqlite, .postgres])
    func hostileNamesRoundTripAndAnUnreadableRowIsSkipped(kind: StoreKind) throws {
        let reports = HostileRowsTests.Reports()
        let fixture = try StoreFixture(kind, options: reports.options)
        let nasty = HostileRowsTests.nastyIdentifiers
        let manifest = CapabilityManifest(
            appID: nasty[0], appVersion: nasty[1], platform: nasty[2], build: nasty[3],
            types: Dictionary(uniqueKeysWithValues: nasty.map { ($0, .init(required: [$0])) }),
            arrangements: nasty, uploadedAt: Timestamp(secondsSinceEpoch: 5))
        try fixture.store.recordManifest(manifest)
        try fixture.store.recordManifest(Self.manifest(version: "1.0"))
        try HostileRowsTests.edit(
            fixture, "UPDATE manifests SET manifest = $1 WHERE app_version = $2",
            [.blob(Array("{oops".utf8)), .text("1.0")])
        #expect(try fixture.store.manifests(appID: nil) == [manifest])
        #expect(reports.all.map(\.table) == ["manifests"])
    }
}
