/// One app of the simulated fleet: its versions and what each registers, its installs, and the backend serving it.
struct SimulatedApp: Sendable {
    /// One released version.
    struct Version: Sendable {
        let name: String
        let build: String
        /// The widget types it can render (sent as capabilities when the app sends them).
        let registeredTypes: [String]
        /// Share of the installs not on the newest version.
        let share: Double
    }

    let appID: String
    /// The backend service whose release the app's events echo, such as `page-api`.
    let service: String
    /// Oldest first; the last one is newly released and ramps up over the simulated hours.
    let versions: [Version]
    /// Share of installs on the newest version at the start and at the end of the simulated hours.
    let adoption: (start: Double, end: Double)
    let installCount: Int
    /// Share of all batches that come from this app.
    let trafficShare: Double
    let sendsCapabilities: Bool
    /// Share of this app's batches sent with `Content-Encoding: gzip`.
    let gzipShare: Double
    /// Pages and the share of decodes each takes.
    let pages: [(id: String, weight: Double)]

    var newest: Version { versions[versions.count - 1] }

    /// The fleet every simulation runs: a shop whose page-api deploys cause the trouble, a reader that sends no
    /// capabilities, and a travel app that stays healthy.
    static let fleet: [SimulatedApp] = {
        let base = ["title_block", "image_text_card", "carousel_v2", "promo_banner", "product_grid", "rating_stars"]
        let shop = SimulatedApp(
            appID: "com.example.shop", service: "page-api",
            versions: [
                Version(name: "5.1.0", build: "5100", registeredTypes: base, share: 0.15),
                Version(name: "5.2.0", build: "5200", registeredTypes: base + ["countdown_timer"], share: 0.30),
                Version(
                    name: "5.2.1", build: "5210", registeredTypes: base + ["countdown_timer", "video_tile"],
                    share: 0.55),
                Version(
                    name: "5.3.0", build: "5300",
                    registeredTypes: base + ["countdown_timer", "video_tile", "hologram_projector", "story_ring"],
                    share: 0),
            ],
            adoption: (0.05, 0.45), installCount: 3_000, trafficShare: 0.6, sendsCapabilities: true, gzipShare: 0.3,
            pages: [("home", 0.30), ("search", 0.20), ("product_detail", 0.25), ("deals", 0.10), ("cart", 0.15)])
        let articles = ["article_header", "paragraph", "image_text_card", "quote_block", "related_links"]
        let reader = SimulatedApp(
            appID: "com.example.reader", service: "article-api",
            versions: [
                Version(name: "3.4.0", build: "340", registeredTypes: articles, share: 1),
                Version(name: "3.5.0", build: "350", registeredTypes: articles + ["audio_player"], share: 0),
            ],
            adoption: (0.20, 0.60), installCount: 1_200, trafficShare: 0.25, sendsCapabilities: false, gzipShare: 1,
            pages: [("front", 0.5), ("article", 0.4), ("saved", 0.1)])
        let trips = ["title_block", "image_text_card", "map_snippet", "rating_stars", "carousel_v2"]
        let travel = SimulatedApp(
            appID: "com.example.travel", service: "trip-api",
            versions: [
                Version(name: "1.8.0", build: "180", registeredTypes: trips, share: 1),
                Version(name: "1.9.0", build: "190", registeredTypes: trips + ["price_calendar"], share: 0),
            ],
            adoption: (0.10, 0.50), installCount: 600, trafficShare: 0.15, sendsCapabilities: true, gzipShare: 0.5,
            pages: [("explore", 0.6), ("trip", 0.4)])
        return [shop, reader, travel]
    }()
}
