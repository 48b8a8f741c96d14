import Foundation
import Testing

/// The query commands against a seeded SQLite store, run in-process: exit codes, JSON shapes, table and CSV.
@Suite struct QueryCommandTests {
    @Test func ungatedFindsTheTypeWithItsGateAndDeployInContractJSON() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["ungated", "--format", "json"] + store.window)
        #expect(result.status == 3)
        let json = try CLI.json(result)
        // docs/api.md#query-output's keys, and the additive `freshness`.
        #expect(json["freshness"] is [String: Any])
        #expect(Set(json.keys).subtracting(["freshness"]) == ["from", "to", "ungated"])
        #expect(json["from"] as? String == SeededStore.from)
        let ungated = try #require(json["ungated"] as? [[String: Any]])
        let type = try #require(ungated.first)
        #expect(ungated.count == 1)
        #expect(
            Set(type.keys) == [
                "appID", "widgetType", "events", "installs", "affectedVersions", "renderingVersions", "suggestedGate",
                "firstSeen", "suspectDeploy", "likelyTypoOf", "status",
            ])
        #expect(type["widgetType"] as? String == "hologram_projector")
        #expect(type["events"] as? Int == 100)
        #expect(type["renderingVersions"] as? [String] == ["5.3.0", "5.4.0"])
        #expect((type["suggestedGate"] as? [String: Any])?["minAppVersion"] as? String == "5.3.0")
        #expect(type["likelyTypoOf"] is NSNull)
        let affected = try #require((type["affectedVersions"] as? [[String: Any]])?.first)
        #expect(Set(affected.keys) == ["appVersion", "events", "installs", "installShare"])
        let deploy = try #require(type["suspectDeploy"] as? [String: Any])
        #expect(Set(deploy.keys) == ["service", "version", "finishedAt", "lagSeconds"])
        #expect(deploy["version"] as? String == "2026.11.30-2")
        // Key order is docs/api.md#query-output's.
        let order = [
            "\"appID\"", "\"widgetType\"", "\"events\"", "\"affectedVersions\"", "\"suggestedGate\"",
            "\"suspectDeploy\"", "\"likelyTypoOf\"",
        ].map { result.standardOutput.range(of: $0)!.lowerBound }
        #expect(order == order.sorted())
    }

    @Test func ungatedExitsZeroWhenNothingPassesTheFloors() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["ungated", "--min-installs", "500"] + store.window)
        #expect(result.status == 0)
        #expect(result.standardOutput.hasPrefix("No ungated types"))
    }

    @Test func ungatedTableAndCSV() async throws {
        let store = try SeededStore()
        let table = await CLI.run(["ungated"] + store.window)
        #expect(table.status == 3)
        let lines = table.standardOutput.split(separator: "\n")
        // One block per type: its full name first, the gate and the suspect deploy under it, nothing cut.
        #expect(lines.first?.hasPrefix("hologram_projector") == true)
        #expect(table.standardOutput.contains("gate at ≥ 5.3.0"))
        #expect(table.standardOutput.contains("page-api@2026.11.30-2"))
        #expect(lines.allSatisfy { $0.count <= 80 })
        let csv = await CLI.run(["ungated", "--format", "csv"] + store.window)
        #expect(csv.status == 3)
        let rows = csv.standardOutput.components(separatedBy: "\r\n")
        #expect(rows[0].hasPrefix("appID,widgetType,appVersion,events,installs,installShare"))
        #expect(rows[1].hasPrefix("com.example.shop,hologram_projector,5.2.1,100,"))
    }

    @Test func spikesFindTheJumpInContractJSON() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["spikes", "--format", "json", "--app", "com.example.shop"] + store.window)
        #expect(result.status == 3, "\(result.standardOutput)\(result.standardError)")
        let json = try CLI.json(result)
        // docs/api.md#query-output's keys, and the additive `freshness`.
        #expect(json["freshness"] is [String: Any])
        #expect(Set(json.keys).subtracting(["freshness"]) == ["from", "to", "spikes", "incidents"])
        // Two causes since issue 39: the video_tile jump, and hologram_projector from nothing on 30 of the app's 100
        // installs carrying a release never sent before (an incident by reach, where the old floor of 20 events
        // waited).
        let all = try #require(json["spikes"] as? [[String: Any]])
        #expect(Set(all.compactMap { $0["widgetType"] as? String }) == ["video_tile", "hologram_projector"])
        let spikes = all.filter { $0["widgetType"] as? String == "video_tile" }
        let spike = try #require(spikes.first)
        #expect(
            Set(spike.keys) == [
                "appID", "kind", "widgetType", "appVersion", "onset", "peakWindowStart", "count", "baseline", "ratio",
                "suspectDeploy", "backendReleases",
            ])
        #expect(spikes.allSatisfy { $0["widgetType"] as? String == "video_tile" })
        #expect(spikes.contains { $0["appVersion"] is NSNull })
        #expect(spike["onset"] as? String == "2026-11-30T09:30:00Z")
        // One cause, one incident: the across-versions spike and the version's own, with the version's figures.
        let incidents = try #require(json["incidents"] as? [[String: Any]])
        #expect(incidents.compactMap { $0["widgetType"] as? String } == ["hologram_projector", "video_tile"])
        let incident = try #require(incidents.last)
        #expect(
            Set(incident.keys) == [
                "appID", "kind", "widgetType", "onset", "peakWindowStart", "count", "baseline", "ratio", "versions",
                "suspectDeploy", "backendReleases",
            ])
        #expect(incident["widgetType"] as? String == "video_tile")
        let versions = try #require(incident["versions"] as? [[String: Any]])
        #expect(
            versions.compactMap { $0["appVersion"] as? String } == spikes.compactMap { $0["appVersion"] as? String })
    }

    @Test func spikesTableNamesTheTypeInFullAndFits80Columns() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["spikes", "--app", "com.example.shop"] + store.window)
        #expect(result.status == 3)
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("video_tile  malformedPayload  on ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("    VERSION") })
        #expect(lines.contains { $0.hasPrefix("    all ") })
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines.contains { $0.hasPrefix("2 incidents (") }, "\(lines)")
    }

    @Test func teamFilterKeepsOnlyTheTeamsFindingsAndNeedsAnOwnersFile() async throws {
        let store = try SeededStore()
        let owners = store.directory.file("owners.json")
        try Data(
            #"{"defaultTeam": "platform", "rules": [{"widgetType": "video_*", "team": "media"}]}"#.utf8
        ).write(to: URL(fileURLWithPath: owners))
        let media = await CLI.run(["spikes", "--owners", owners, "--team", "media", "--format", "json"] + store.window)
        #expect(media.status == 3)
        #expect((try CLI.json(media)["incidents"] as? [[String: Any]])?.count == 1)
        // The platform team owns the hologram_projector incident only.
        let platform = await CLI.run(
            ["spikes", "--owners", owners, "--team", "platform", "--format", "json"] + store.window)
        #expect(platform.status == 3)
        #expect(
            (try CLI.json(platform)["incidents"] as? [[String: Any]])?.map { $0["widgetType"] as? String }
                == ["hologram_projector"])
        let table = await CLI.run(["spikes", "--owners", owners] + store.window)
        #expect(table.standardOutput.contains("team media"))
        let ungated = await CLI.run(
            ["ungated", "--owners", owners, "--team", "platform", "--format", "json"] + store.window)
        #expect(
            (try CLI.json(ungated)["ungated"] as? [[String: Any]])?.map { $0["widgetType"] as? String }
                == ["hologram_projector"])
        let top = await CLI.run(["top", "--owners", owners, "--team", "media", "--format", "json"] + store.window)
        let rows = try #require(try CLI.json(top)["top"] as? [[String: Any]])
        #expect(!rows.isEmpty && rows.allSatisfy { ($0["widgetType"] as? String)?.hasPrefix("video_") == true })
        let missing = await CLI.run(["spikes", "--team", "media"] + store.window)
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("--team needs --owners"))
    }

    @Test func spikesExitZeroOnAQuietWindow() async throws {
        let store = try SeededStore()
        let result = await CLI.run(
            ["spikes", "--from", "2026-11-30T06:00:00Z", "--to", "2026-11-30T08:30:00Z", "--store", store.path])
        #expect(result.status == 0)
        #expect(result.standardOutput.hasPrefix("No spikes"))
    }

    @Test func topRanksByEventsWithTheTrend() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["top", "--format", "json"] + store.window)
        #expect(result.status == 0)
        let json = try CLI.json(result)
        // docs/api.md#query-output's keys, and the additive `freshness`.
        #expect(json["freshness"] is [String: Any])
        #expect(Set(json.keys).subtracting(["freshness"]) == ["from", "to", "previousFrom", "previousTo", "top"])
        #expect(json["previousFrom"] as? String == "2026-11-30T02:00:00Z")
        let rows = try #require(json["top"] as? [[String: Any]])
        #expect(
            Set(rows[0].keys) == [
                "appID", "kind", "widgetType", "appVersion", "events", "installs", "previousEvents", "change",
            ])
        #expect(rows[0]["widgetType"] as? String == "video_tile")
        #expect(rows[0]["events"] as? Int == 284)
        let card = try #require(rows.first { $0["widgetType"] as? String == "image_text_card" })
        #expect(card["events"] as? Int == 10)
        #expect(card["previousEvents"] as? Int == 4)
        #expect(card["change"] as? Double == 1.5)
        let hologram = try #require(rows.first { $0["widgetType"] as? String == "hologram_projector" })
        #expect(hologram["change"] is NSNull)

        let table = await CLI.run(["top", "--kind", "unknownType"] + store.window)
        #expect(table.standardOutput.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(table.standardOutput.contains("hologram_projector"))
        #expect(!table.standardOutput.contains("video_tile"))
        #expect(table.standardOutput.contains("new"))
    }

    @Test func versionsReportInstallsBatchesAndCleanRate() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["versions", "--format", "json"] + store.window)
        #expect(result.status == 0)
        let json = try CLI.json(result)
        // docs/api.md#query-output's keys, and the additive `freshness`.
        #expect(json["freshness"] is [String: Any])
        #expect(Set(json.keys).subtracting(["freshness"]) == ["from", "to", "versions"])
        let rows = try #require(json["versions"] as? [[String: Any]])
        #expect(
            rows.map { "\($0["appID"]!) \($0["appVersion"]!)" } == [
                "com.example.reader 1.9", "com.example.reader 2.0", "com.example.shop 5.2.1", "com.example.shop 5.3.0",
                "com.example.shop 5.4.0",
            ])
        #expect(
            Set(rows[0].keys) == [
                "appID", "appVersion", "platforms", "installs", "batches", "cleanBatches", "decodeCleanRate", "decodes",
                "sendsCapabilities", "registeredTypes",
            ])
        let shop = rows[2]
        #expect(shop["installs"] as? Int == 40)
        #expect(shop["batches"] as? Int == 480)
        #expect(shop["decodeCleanRate"] as? Double == 0.75)
        #expect(shop["sendsCapabilities"] as? Bool == true)
        #expect(rows[0]["sendsCapabilities"] as? Bool == false)

        let csv = await CLI.run(["versions", "--format", "csv", "--app", "com.example.reader"] + store.window)
        #expect(csv.standardOutput.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count == 3)
    }

    @Test func typesListRegisteringRenderingAndUnknownVersions() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["types", "--format", "json"] + store.window)
        #expect(result.status == 0)
        let json = try CLI.json(result)
        // docs/api.md#query-output's keys, and the additive `freshness`.
        #expect(json["freshness"] is [String: Any])
        #expect(Set(json.keys).subtracting(["freshness"]) == ["from", "to", "types"])
        let rows = try #require(json["types"] as? [[String: Any]])
        #expect(
            Set(rows[0].keys) == [
                "appID", "widgetType", "known", "registeringVersions", "renderingVersions", "unknownIn", "events",
                "sources",
            ])
        let hologram = try #require(
            rows.first {
                $0["appID"] as? String == "com.example.shop" && $0["widgetType"] as? String == "hologram_projector"
            })
        #expect(hologram["registeringVersions"] as? [String] == ["5.3.0", "5.4.0"])
        #expect(hologram["unknownIn"] as? [String] == ["5.2.1"])
        #expect((hologram["events"] as? [String: Int])?["unknownType"] == 100)
        let banner = try #require(
            rows.first {
                $0["appID"] as? String == "com.example.reader" && $0["widgetType"] as? String == "promo_banner"
            })
        #expect(banner["registeringVersions"] as? [String] == [])
        #expect(banner["renderingVersions"] as? [String] == ["2.0"])
        #expect(banner["known"] as? Bool == true)
        #expect(
            banner["sources"] as? [String: [String]] == [
                "manifest": [], "capabilities": [], "traffic": ["1.9", "2.0"],
            ])
        #expect(
            hologram["sources"] as? [String: [String]] == [
                "manifest": [], "capabilities": ["5.2.1", "5.3.0", "5.4.0"], "traffic": [],
            ])
    }

    @Test func emptyWindowPrintsASentenceNotAnEmptyTable() async throws {
        let store = try SeededStore()
        for command in ["top", "versions", "types"] {
            let result = await CLI.run(
                [command, "--from", "2025-01-01T00:00:00Z", "--to", "2025-01-02T00:00:00Z", "--store", store.path])
            #expect(result.status == 0)
            #expect(result.standardOutput.hasPrefix("No "), "\(command): \(result.standardOutput)")
        }
    }
}
