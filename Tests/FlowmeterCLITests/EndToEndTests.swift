import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// The real executable end to end: `serve --kafka embedded --store`, `simulate` with a fixed seed, the capability
/// manifests of the simulator's versions uploaded as build pipelines do (`manifests upload --collector`), then every
/// query command in JSON, each checked against the simulator's ground truth.
@Suite(.serialized) struct EndToEndTests {
    static let ingestKey = "e2e-ingest-key-0123456789"
    static let adminKey = "e2e-admin-key-0123456789"

    @Test func serveSimulateAndEveryQueryFindWhatTheSimulationPlanted() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-e2e")
        defer { directory.remove() }
        let storePath = directory.file("flowmeter.sqlite")
        let serve = try await startServe(in: directory, store: storePath)
        defer { serve.child.terminate(timeout: .zero) }

        let truthPath = directory.file("truth.json")
        let manifestsPath = directory.file("manifests")
        let simulated = try await FlowmeterExecutable.run(
            [
                "simulate", "--target", "http://127.0.0.1:\(serve.port)", "--key", Self.ingestKey, "--admin-key",
                Self.adminKey, "--seed", "7", "--duration", "15s", "--simulated-hours", "4", "--max-requests", "3000",
                "--concurrency", "8", "--truth", truthPath, "--manifests", manifestsPath, "--quiet",
            ], timeout: .seconds(180))
        #expect(simulated.status == 0, "simulate: \(simulated.errors)")
        let truth = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: truthPath))) as? [String: Any])
        let requests = try #require(truth["requests"] as? [String: Any])
        let accepted = try #require(requests["accepted"] as? Int)
        #expect(accepted == 3000, "every planned batch taken: \(requests)")
        #expect(requests["serverErrors"] as? Int == 0 && requests["clientErrors"] as? Int == 0)
        #expect(truth["deploysRecorded"] as? Bool == true)

        let occurrences = try #require(requests["occurrencesAccepted"] as? Int)
        let stored = try await waitForTraffic(batches: Int64(accepted), occurrences: Int64(occurrences), in: storePath)
        #expect(
            stored.batches == Int64(accepted) && stored.occurrences == Int64(occurrences),
            "the store holds \(stored) of \(accepted) batches and \(occurrences) occurrences")

        let commands = try await availableCommands()
        let window = ["--store", storePath, "--since", "5h", "--format", "json"]

        // Every simulated version's manifest, uploaded to the collector like a build pipeline does.
        let manifestFiles = try FileManager.default.contentsOfDirectory(atPath: manifestsPath).sorted()
        #expect(manifestFiles.count == 16, "two platforms of each of the fleet's 8 versions: \(manifestFiles)")
        for file in manifestFiles {
            let uploaded = try await FlowmeterExecutable.run(
                [
                    "manifests", "upload", "\(manifestsPath)/\(file)", "--collector", "http://127.0.0.1:\(serve.port)",
                    "--admin-key", Self.adminKey,
                ], timeout: .seconds(30))
            #expect(uploaded.status == 0, "\(file): \(uploaded.errors)")
        }
        let listedManifests = try await query(["manifests", "list", "--store", storePath, "--format", "json"])
        #expect((listedManifests.json["manifests"] as? [[String: Any]])?.count == 16)
        // The manifests agree with the traffic the simulation planted: no drift.
        let drift = try await query(["manifests", "check"] + window)
        #expect(drift.status == 0, "manifests check: \(drift.text)")
        #expect((drift.json["drift"] as? [Any])?.isEmpty == true)
        #expect(drift.json["manifests"] as? Int == 16)

        // ungated: the planted type with its gate and the deploy that shipped it; the typo; nothing from debug builds.
        let ungatedTruth = try #require((truth["ungated"] as? [[String: Any]])?.first)
        let typoTruth = try #require((truth["typos"] as? [[String: Any]])?.first)
        let ungated = try await query(["ungated"] + window)
        #expect(ungated.status == 3)
        let flagged = try #require(ungated.json["ungated"] as? [[String: Any]])
        let hologram = try #require(
            flagged.first { $0["widgetType"] as? String == ungatedTruth["widgetType"] as? String })
        #expect(hologram["appID"] as? String == ungatedTruth["appID"] as? String)
        #expect((hologram["suggestedGate"] as? [String: Any])?["minAppVersion"] as? String == "5.3.0")
        #expect(hologram["renderingVersions"] as? [String] == ungatedTruth["renderingVersions"] as? [String])
        let affected = (hologram["affectedVersions"] as? [[String: Any]])?.compactMap { $0["appVersion"] as? String }
        #expect(affected == ungatedTruth["affectedVersions"] as? [String])
        #expect(hologram["likelyTypoOf"] is NSNull)
        let introduced = try #require(ungatedTruth["introducedBy"] as? [String: Any])
        let suspect = hologram["suspectDeploy"] as? [String: Any]
        #expect(suspect?["service"] as? String == introduced["service"] as? String)
        #expect(suspect?["version"] as? String == introduced["version"] as? String)
        let typo = try #require(flagged.first { $0["widgetType"] as? String == typoTruth["widgetType"] as? String })
        #expect(typo["likelyTypoOf"] as? String == typoTruth["likelyTypoOf"] as? String)
        #expect(typo["suggestedGate"] is NSNull)
        #expect(
            (typo["suspectDeploy"] as? [String: Any])?["version"] as? String
                == (typoTruth["introducedBy"] as? [String: Any])?["version"] as? String)
        let notFlagged = try #require(truth["notFlagged"] as? [String])
        #expect(flagged.allSatisfy { !notFlagged.contains($0["widgetType"] as? String ?? "") })
        #expect(flagged.count == 2, "only the planted types: \(flagged.map { $0["widgetType"] ?? "" })")
        // Status: the ungated type was sent two days before and rolled back, so its return is a regression; the
        // typo is new.
        #expect(hologram["status"] as? String == ungatedTruth["status"] as? String)
        #expect(typo["status"] as? String == typoTruth["status"] as? String)
        let regressions = try #require(truth["regressions"] as? [[String: Any]])
        #expect(regressions.map { $0["widgetType"] as? String } == [ungatedTruth["widgetType"] as? String])
        #expect(hologram["status"] as? String == "regressed")

        // spikes: one incident per planted cause, attributed to the deploy that shipped it, on versions the cause
        // reaches; nothing for the background.
        let spikes = try await query(["spikes"] + window)
        #expect(spikes.status == 3)
        let found = try #require(spikes.json["spikes"] as? [[String: Any]])
        let incidents = try #require(spikes.json["incidents"] as? [[String: Any]])
        let plantedIncidents = try #require(truth["incidents"] as? [[String: Any]])
        #expect(incidents.count == plantedIncidents.count, "one incident per cause: \(incidents)")
        for planted in plantedIncidents {
            let matching = incidents.filter {
                $0["kind"] as? String == planted["kind"] as? String
                    && $0["widgetType"] as? String == planted["widgetType"] as? String
            }
            #expect(matching.count == 1, "\(planted["widgetType"] ?? "") \(planted["kind"] ?? ""): \(matching)")
            guard let incident = matching.first else { continue }
            let introduced = planted["introducedBy"] as? [String: Any]
            let release = "\(introduced?["service"] as? String ?? "")@\(introduced?["version"] as? String ?? "")"
            #expect(
                (incident["suspectDeploy"] as? [String: Any])?["version"] as? String == introduced?["version"]
                    as? String)
            // Later deploys keep serving a fault, so its release is among the incident's, not always the most frequent.
            #expect((incident["backendReleases"] as? [String])?.contains(release) == true)
            let versions = (incident["versions"] as? [[String: Any]])?.compactMap { $0["appVersion"] as? String } ?? []
            let reachable = Set(planted["versions"] as? [String] ?? [])
            #expect(!versions.isEmpty && versions.allSatisfy(reachable.contains), "\(versions) ⊄ \(reachable)")
        }
        // Every spike belongs to one of the incidents: the background never spikes.
        let planted = Set(plantedIncidents.compactMap { $0["widgetType"] as? String })
        #expect(found.allSatisfy { planted.contains($0["widgetType"] as? String ?? "") }, "no noise spikes: \(found)")

        // gates: every type only some versions render, at the version the truth names; too thin to forecast. With
        // the manifests, the reader (which sends no capabilities) has gates too.
        let gates = try await query(["gates"] + window)
        #expect(gates.status == 0, "gates: \(gates.errors)")
        let listed = try #require(gates.json["gates"] as? [[String: Any]])
        let truthGates = try #require(truth["gatesWithManifests"] as? [[String: Any]])
        func key(_ gate: [String: Any]) -> String {
            "\(gate["appID"] as? String ?? "") \(gate["widgetType"] as? String ?? "") \(gate["minAppVersion"] as? String ?? "")"
        }
        #expect(Set(listed.map(key)) == Set(truthGates.map(key)))
        for gate in listed {
            let share = gate["belowShare"] as? Double ?? -1
            #expect(share > 0 && share < 1, "\(key(gate)): \(share)")
            let forecast = gate["forecast"] as? [String: Any]
            #expect(forecast?["basis"] as? String == "tooThin" && forecast?["date"] is NSNull)
        }
        // The share below a later gate is larger: fewer installs have the newer version.
        let shop = Dictionary(
            listed.filter { $0["appID"] as? String == "com.example.shop" }.map {
                ($0["minAppVersion"] as? String ?? "", $0["belowShare"] as? Double ?? 0)
            }, uniquingKeysWith: { a, _ in a })
        #expect((shop["5.2.0"] ?? 1) < (shop["5.2.1"] ?? 0) && (shop["5.2.1"] ?? 1) < (shop["5.3.0"] ?? 0))

        // deploys list: every deploy the simulation recorded in the window, at its simulated time.
        let deploys = try await query(["deploys", "list", "--store", storePath, "--since", "5h", "--format", "json"])
        #expect(deploys.status == 0)
        let deployed = (deploys.json["deploys"] as? [[String: Any]])?.compactMap { deploy -> String? in
            guard let service = deploy["service"] as? String, let version = deploy["version"] as? String else {
                return nil
            }
            return "\(service)@\(version)"
        }
        let windowStart = Date().addingTimeInterval(-5 * 3600)
        let recorded = (truth["deploys"] as? [[String: Any]])?.compactMap { deploy -> String? in
            guard let finished = (deploy["finishedAt"] as? String).flatMap(Self.date), finished >= windowStart
            else { return nil }
            return deploy["release"] as? String
        }
        #expect(deployed == recorded)

        if commands.contains("versions") {
            let versions = try await query(["versions"] + window)
            #expect(versions.status == 0, "versions: \(versions.errors)")
            #expect(versions.text.contains("5.3.0") && versions.text.contains("com.example.reader"))
        }
        if commands.contains("types") {
            let types = try await query(["types"] + window)
            #expect(types.status == 0, "types: \(types.errors)")
            #expect(types.text.contains("hologram_projector") && types.text.contains("story_ring"))
            // Every live version answers from its manifest.
            let rows = types.json["types"] as? [[String: Any]] ?? []
            #expect(!rows.isEmpty)
            for row in rows {
                let sources = row["sources"] as? [String: [String]]
                #expect(sources?["capabilities"] == [] && sources?["traffic"] == [], "\(row)")
            }
        }
        if commands.contains("top") {
            let top = try await query(["top"] + window)
            #expect(top.status == 0, "top: \(top.errors)")
            #expect(top.text.contains("hologram_projector") && top.text.contains("malformedPayload"))
        }
        if commands.contains("check") {
            let payload = directory.file("home.json")
            try Data(
                #"{"page": {"id": "home", "sections": [{"widgets": [{"type": "title_block"}, {"type": "hologram_projector"}]}]}}"#
                    .utf8
            ).write(to: URL(fileURLWithPath: payload))
            let check = try await query(["check", payload, "--app", "com.example.shop"] + window)
            #expect(check.status == 3, "check flags hologram_projector: \(check.text) \(check.errors)")
            #expect(check.text.contains("hologram_projector"))
            // The malformed deploy's payload, checked before it ships: every shop version requires imageURL.
            let malformed = try #require((truth["malformed"] as? [[String: Any]])?.first)
            let dropped = directory.file("product_detail.json")
            try Data(
                #"{"page": {"id": "product_detail", "sections": [{"arrangement": "grid", "widgets": [{"type": "image_text_card", "data": {"title": "Lamp"}}]}]}}"#
                    .utf8
            ).write(to: URL(fileURLWithPath: dropped))
            let shapes = try await query(["check", dropped, "--app", "com.example.shop"] + window)
            #expect(shapes.status == 3, "check catches the dropped key: \(shapes.text)")
            let card = (shapes.json["types"] as? [[String: Any]])?.first {
                $0["widgetType"] as? String == "image_text_card"
            }
            let problem = (card?["problems"] as? [[String: Any]])?.first
            #expect(problem?["kind"] as? String == "malformedPayload")
            #expect(problem?["key"] as? String == malformed["missingKey"] as? String)
            #expect(problem?["path"] as? String == "page.sections.Index 0.widgets.Index 0.data")
            #expect(problem?["versions"] as? [String] == ["5.1.0", "5.2.0", "5.2.1", "5.3.0"])
            #expect((problem?["installShare"] as? Double ?? 0) > 0.99)
            #expect((shapes.json["arrangements"] as? [Any])?.isEmpty == true)
        }
        if commands.contains("report") {
            let week = Self.isoWeek(Date())
            let report = try await query(["report", "--store", storePath, "--week", week, "--format", "json"])
            #expect([0, 3].contains(report.status), "report: \(report.errors)")
            #expect(report.text.contains("hologram_projector"))
        }

        #expect(serve.child.terminate(timeout: .seconds(40)) == 0)
    }

    // MARK: - Helpers

    /// Starts `flowmeter serve --kafka embedded --store` on a free loopback port and waits (bounded) for /healthz.
    private func startServe(in directory: TemporaryDirectory, store: String) async throws -> ServerProcess {
        let keys = try TestKeysFile.write(
            to: directory.file("keys.json"), ingestKey: Self.ingestKey,
            apps: ["com.example.shop", "com.example.reader", "com.example.travel"],
            adminKeys: [Self.adminKey])
        return try await FlowmeterExecutable.serve(
            [
                "--kafka", "embedded", "--store", store, "--keys", keys, "--salt",
                "00112233445566778899aabbccddeeff", "--log-level", "warning", "--shutdown-timeout", "10s",
            ], within: .seconds(10), attempts: 3)
    }

    /// Polls the store until it holds every acknowledged batch and every occurrence (bounded by the suite's hang
    /// guard); returns what it holds.
    private func waitForTraffic(batches: Int64, occurrences: Int64, in path: String) async throws -> (
        batches: Int64, occurrences: Int64
    ) {
        let store = try openRollupStore(url: path)
        var stored: (batches: Int64, occurrences: Int64) = (0, 0)
        _ = try await eventually(every: .milliseconds(500)) {
            let now = Int64(Date().timeIntervalSince1970)
            let from = Timestamp(secondsSinceEpoch: now - 72 * 3_600)
            let to = Timestamp(secondsSinceEpoch: now + 3_600)
            stored.batches = try store.versionRollups(from: from, to: to, appID: nil).reduce(0) { $0 + $1.batches }
            stored.occurrences = try store.seriesRollups(SeriesQuery(from: from, to: to)).reduce(0) { $0 + $1.events }
            return stored.batches >= batches && stored.occurrences >= occurrences
        }
        return stored
    }

    /// The subcommands `flowmeter --help` lists.
    private func availableCommands() async throws -> Set<String> {
        let help = try await FlowmeterExecutable.run(["--help"], timeout: .seconds(10)).output
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "COMMANDS:") else { return [] }
        var names: Set<String> = []
        for line in lines[(start + 1)...] {
            if line.isEmpty { break }
            if line.hasPrefix("  ") && !line.hasPrefix("   "), let name = line.split(separator: " ").first {
                names.insert(String(name))
            }
        }
        return names
    }

    private struct QueryResult {
        let status: Int32
        let text: String
        let errors: String
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// Runs a query command and checks that its output is one JSON object.
    private func query(_ arguments: [String]) async throws -> QueryResult {
        let result = try await FlowmeterExecutable.run(arguments, timeout: .seconds(30))
        let parsed = try? JSONSerialization.jsonObject(with: Data(result.output.utf8))
        #expect(
            parsed is [String: Any], "\(arguments.prefix(2)) printed no JSON object: \(result.output) \(result.errors)")
        return QueryResult(status: result.status, text: result.output, errors: result.errors)
    }

    static func date(_ text: String) -> Date? {
        ISO8601DateFormatter().date(from: text)
    }

    static func isoWeek(_ date: Date) -> String {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
        return String(format: "%04d-W%02d", parts.yearForWeekOfYear ?? 0, parts.weekOfYear ?? 0)
    }
}
