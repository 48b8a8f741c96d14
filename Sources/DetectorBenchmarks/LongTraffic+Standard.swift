import FlowmeterModels
import Rollups

extension LongTraffic {
    /// The apps of the standard scenario: three small ones (80–100 installs, a few active at night) and a large one
    /// (4,000 installs), each with steady, over-dispersed background diagnostics, some at 15–20 events per bucket.
    public static let standardApps: [App] = [
        App(
            appID: "com.example.tides", installs: 90, activeShare: 0.25, sendsDecodes: false,
            background: [
                Background(.duplicateID, "product_grid", peakEvents: 18),
                Background(.malformedPayload, "title_block", peakEvents: 6),
                Background(.malformedPayload, "hero_banner", peakEvents: 1),
                Background(.unknownType, "legacy_carousel", peakEvents: 0.3),
            ]),
        App(
            appID: "com.example.lumen", installs: 80, activeShare: 0.25, sendsDecodes: true,
            background: [
                Background(.duplicateID, "search_results", peakEvents: 16),
                Background(.malformedPayload, "product_grid", peakEvents: 3),
                Background(.droppedElement, "video_tile", peakEvents: 2),
            ]),
        App(
            appID: "com.example.harbor", installs: 100, activeShare: 0.25, sendsDecodes: false,
            background: [
                Background(.duplicateID, "feed_list", peakEvents: 20),
                Background(.malformedPayload, "promo_tile", peakEvents: 4),
                Background(.unknownType, "old_widget", peakEvents: 0.2),
            ]),
        App(
            appID: "com.example.shop", installs: 4000, activeShare: 0.1, sendsDecodes: true,
            background: [
                Background(.duplicateID, "product_grid", peakEvents: 200),
                Background(.malformedPayload, "title_block", peakEvents: 100),
                Background(.malformedPayload, "price_tag", peakEvents: 30),
                Background(.droppedElement, "video_tile", peakEvents: 12),
                Background(.unknownType, "legacy_banner", peakEvents: 2),
                Background(.malformedPayload, "carousel", peakEvents: 0.5),
            ]),
    ]

    /// The standard scenario over `days` days (at least 10): the planted causes of issue 39 in days 1–9, steady
    /// traffic after.
    ///
    /// - a flood in a small app from nothing (15–28 events per bucket from half its active installs), day 2;
    /// - a canary: a release on 15% of pages sends 11–20 malformed payloads per bucket from nothing for an hour, then
    ///   goes to everyone (80–130), day 4; its deploy marker finishes at the full rollout;
    /// - a flood in one app version only, day 5 at 19:00;
    /// - a flood that dips back to nothing for three buckets midway, while the daily deploy lands in the dip, day 6;
    /// - a night flood in a small app (10–16 events from most of the few installs awake), day 7 at 03:00;
    /// - a retired type that floods on day 1 and again, a regression, after six quiet days on day 8;
    /// - a 40% rise of a busy series for four hours, day 9: not an incident.
    public static func standard(days: Int = 10, seed: UInt64 = 39) -> LongTraffic {
        precondition(days >= 10, "the planted causes need 10 days")
        var plants: [Plant] = []
        var rollouts: [Rollout] = []
        var deploys: [DeployMarker] = []
        /// A hotfix of page-api that goes live at `at` and causes a plant.
        func deploy(_ version: String, at: Timestamp) -> String {
            rollouts.append(Rollout(at: at, release: "page-api@\(version)"))
            deploys.append(DeployMarker(service: "page-api", version: version, finishedAt: at))
            return "page-api@\(version)"
        }

        plants.append(
            Plant(
                name: "retired type, first flood", appID: "com.example.tides", kind: .unknownType,
                widgetType: "retired_card", start: time(day: 1, hour: 15),
                segments: [Segment(buckets: 12, events: 25...40, installShare: 0.5)],
                expectedDeploy: deploy("2026.2-retire", at: time(day: 1, hour: 14, minute: 57))))
        plants.append(
            Plant(
                name: "flood in a small app", appID: "com.example.tides", kind: .unknownType,
                widgetType: "hologram_projector", start: time(day: 2, hour: 14),
                segments: [Segment(buckets: 24, events: 15...28, installShare: 0.5)],
                expectedDeploy: deploy("2026.3-hologram", at: time(day: 2, hour: 13, minute: 57))))
        // The canary: 15% of pages from 11:00, everyone from 12:00, when the deploy marker finishes.
        rollouts.append(Rollout(at: time(day: 4, hour: 11), release: "page-api@2026.5-canary", share: 0.15))
        rollouts.append(Rollout(at: time(day: 4, hour: 12), release: "page-api@2026.5-canary"))
        deploys.append(
            DeployMarker(
                service: "page-api", version: "2026.5-canary", startedAt: time(day: 4, hour: 11),
                finishedAt: time(day: 4, hour: 12)))
        plants.append(
            Plant(
                name: "canary at 15%, then everyone", appID: "com.example.shop", kind: .malformedPayload,
                widgetType: "image_text_card", start: time(day: 4, hour: 11),
                segments: [
                    Segment(buckets: 12, events: 11...20, installShare: 0.04),
                    Segment(buckets: 24, events: 80...130, installShare: 0.25),
                ],
                release: "page-api@2026.5-canary", expectedDeploy: "page-api@2026.5-canary"))
        plants.append(
            Plant(
                name: "flood in one version", appID: "com.example.shop", kind: .malformedPayload,
                widgetType: "price_tag", start: time(day: 5, hour: 19),
                segments: [Segment(buckets: 12, events: 60...90, installShare: 0.2)], versions: ["5.3.0"],
                expectedDeploy: deploy("2026.6-price", at: time(day: 5, hour: 18, minute: 58))))
        plants.append(
            Plant(
                name: "flood that dips midway", appID: "com.example.lumen", kind: .malformedPayload,
                widgetType: "product_grid", start: time(day: 6, hour: 9),
                segments: [
                    Segment(buckets: 12, events: 40...60, installShare: 0.5),
                    Segment(buckets: 3, events: 0...1, installShare: 0.1),
                    Segment(buckets: 12, events: 40...60, installShare: 0.5),
                ],
                expectedDeploy: deploy("2026.7-grid", at: time(day: 6, hour: 8, minute: 56))))
        plants.append(
            Plant(
                name: "night flood", appID: "com.example.harbor", kind: .droppedElement, widgetType: "story_ring",
                start: time(day: 7, hour: 3),
                segments: [Segment(buckets: 18, events: 10...16, installShare: 0.8)],
                expectedDeploy: deploy("2026.8-night", at: time(day: 7, hour: 2, minute: 55))))
        plants.append(
            Plant(
                name: "regression after six quiet days", appID: "com.example.tides", kind: .unknownType,
                widgetType: "retired_card", start: time(day: 8, hour: 15),
                segments: [Segment(buckets: 12, events: 25...40, installShare: 0.5)],
                expectedDeploy: deploy("2026.9-regress", at: time(day: 8, hour: 14, minute: 56))))
        plants.append(
            Plant(
                name: "a 40% rise", appID: "com.example.shop", kind: .malformedPayload, widgetType: "title_block",
                start: time(day: 9, hour: 13),
                segments: [Segment(buckets: 48, events: 34...44, installShare: 0.3)], isIncident: false,
                expectedDeploy: nil))
        return LongTraffic(
            apps: standardApps, days: days, plants: plants, rollouts: rollouts, deploys: deploys, seed: seed)
    }
}
