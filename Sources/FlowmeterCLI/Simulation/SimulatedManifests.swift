import FlowmeterModels

/// The capability manifests the simulated fleet's build pipelines would upload (docs/api.md#capability-manifests): one
/// per app version and platform, listing exactly the types the version registers, with the keys each type's content
/// reads.
///
/// They agree with the traffic the scenario plants, so `flowmeter manifests check` finds no drift in it: every key a
/// planted `malformedPayload` names (`imageURL`, `title`) is required, and no version lists a type it reports unknown.
enum SimulatedManifests {
    /// The keys of every simulated type: what its content decodes with `decode` and with `decodeIfPresent`.
    static let shapes: [String: CapabilityManifest.TypeShape] = [
        "title_block": .init(required: ["title"], optional: ["subtitle", "sheet"]),
        "image_text_card": .init(
            required: ["title", "imageURL"], optional: ["kicker", "badges", "badges[].label", "action"]),
        "carousel_v2": .init(required: ["items", "items[].title"], optional: ["items[].imageURL", "autoplay"]),
        "promo_banner": .init(required: ["headline"], optional: ["imageURL", "deadline"]),
        "product_grid": .init(required: ["products", "products[].id", "products[].title"], optional: ["columns"]),
        "rating_stars": .init(required: ["value"], optional: ["count"]),
        "countdown_timer": .init(required: ["endsAt"], optional: ["label"]),
        "video_tile": .init(required: ["videoURL"], optional: ["posterURL", "autoplay"]),
        "hologram_projector": .init(required: ["modelURL"], optional: ["depth"]),
        "story_ring": .init(required: ["stories", "stories[].id"], optional: ["seen"]),
        "article_header": .init(required: ["title"], optional: ["byline", "imageURL"]),
        "paragraph": .init(required: ["text"], optional: ["style"]),
        "quote_block": .init(required: ["text"], optional: ["attribution"]),
        "related_links": .init(required: ["links", "links[].url"], optional: ["links[].title"]),
        "audio_player": .init(required: ["audioURL"], optional: ["durationSeconds"]),
        "map_snippet": .init(required: ["latitude", "longitude"], optional: ["zoom"]),
        "price_calendar": .init(required: ["days", "days[].date", "days[].price"], optional: ["currency"]),
    ]

    /// The arrangements every simulated build lays out; the scenario's `masonry` is none of them.
    static let arrangements = ["vertical", "horizontal", "grid"]

    /// The platforms the simulated installs run on.
    static let platforms = ["android", "ios"]

    /// Every manifest of the fleet: each app, version and platform.
    static func all(_ apps: [SimulatedApp] = SimulatedApp.fleet) -> [CapabilityManifest] {
        apps.flatMap { app in
            app.versions.flatMap { version in
                platforms.map { platform in
                    var builder = ManifestBuilder(
                        appID: app.appID, appVersion: version.name, platform: platform, build: version.build)
                    for type in version.registeredTypes {
                        let shape = shapes[type] ?? .init()
                        builder.register(type, required: shape.required, optional: shape.optional)
                    }
                    builder.arrangements = arrangements
                    return try! builder.manifest()
                }
            }
        }
    }

    /// The file name a manifest is written under: `com.example.shop-5.3.0-ios.json`.
    static func fileName(_ manifest: CapabilityManifest) -> String {
        "\(manifest.appID)-\(manifest.appVersion)-\(manifest.platform).json"
    }
}
