import Foundation
import TestSupport
import Testing

/// The read API (docs/api.md#reading) against the real `flowmeter serve` over a seeded store: every query answers what the
/// CLI prints with `--format json`, only for the apps the key may read; 400 names the parameter, 401 and 403.
@Suite(.serialized) struct ReadAPITests {
    static let allKey = "read-all-key"
    static let shopKey = "read-shop-key"
    static let ingestKey = "ingest-key"
    static let window = "from=\(SeededStore.from)&to=\(SeededStore.to)"

    /// The queries with the CLI command line each one is.
    static let queries: [(name: String, command: [String], parameters: String)] = [
        ("top", ["top"], window), ("spikes", ["spikes"], window), ("ungated", ["ungated"], window),
        ("gates", ["gates"], window), ("versions", ["versions"], window), ("types", ["types"], window),
        ("deploys", ["deploys", "list"], window), ("manifests", ["manifests", "list"], ""),
    ]

    @Test func everyQueryAnswersTheCLIsJSONAndKeepsToTheKeysApps() async throws {
        let seeded = try SeededStore()
        let serve = try await Self.serve(seeded)
        defer { _ = serve.child.terminate(timeout: .seconds(20)) }
        for query in Self.queries {
            var cli = query.command + ["--store", seeded.path, "--format", "json"]
            if !query.parameters.isEmpty { cli += ["--from", SeededStore.from, "--to", SeededStore.to] }
            let expected = try await FlowmeterExecutable.run(cli)
            let path = "/v1/query/\(query.name)" + (query.parameters.isEmpty ? "" : "?" + query.parameters)
            let all = try Self.get(serve, path, key: Self.allKey)
            #expect(all.status == 200, "\(query.name): \(all.text)")
            #expect(all.header("Content-Type") == "application/json")
            // The freshness note says how late the data is now, so it is compared apart from the rest.
            #expect(Self.withoutFreshness(all.text) == Self.withoutFreshness(expected.output), "\(query.name)")

            // A key for the shop only: no reader app in the answer, and the shop's findings as the CLI's --app.
            let shop = try Self.get(serve, path, key: Self.shopKey)
            #expect(shop.status == 200, "\(query.name): \(shop.text)")
            #expect(!shop.text.contains("com.example.reader"), "\(query.name) for the shop key: \(shop.text)")
            if query.name != "deploys" {
                let onlyShop = try await FlowmeterExecutable.run(cli + ["--app", "com.example.shop"])
                #expect(
                    Self.withoutFreshness(shop.text) == Self.withoutFreshness(onlyShop.output),
                    "\(query.name) for the shop key")
            }
        }
        // What the shop key sees had reader findings to hide.
        let versions = try Self.get(serve, "/v1/query/versions?\(Self.window)", key: Self.allKey)
        #expect(versions.text.contains("com.example.reader"))
        let spikes = try Self.get(serve, "/v1/query/spikes?\(Self.window)&app=com.example.shop", key: Self.shopKey)
        #expect(spikes.text.contains("video_tile"), "\(spikes.text)")
    }

    @Test func errorsAnswerWithTheErrorBody() async throws {
        let seeded = try SeededStore()
        let serve = try await Self.serve(seeded)
        defer { _ = serve.child.terminate(timeout: .seconds(20)) }
        let noKey = try Self.get(serve, "/v1/query/spikes", key: nil)
        #expect(noKey.status == 401 && noKey.text.contains(#""error":"unauthorized""#), "\(noKey.text)")
        let ingest = try Self.get(serve, "/v1/query/spikes", key: Self.ingestKey)
        #expect(ingest.status == 401, "an ingest key reads nothing: \(ingest.text)")
        let other = try Self.get(serve, "/v1/query/top?app=com.example.reader", key: Self.shopKey)
        #expect(other.status == 403 && other.text.contains(#""error":"forbidden""#), "\(other.text)")
        for (path, parameter) in [
            ("/v1/query/spikes?since=soon", "since"), ("/v1/query/top?limit=-1", "limit"),
            ("/v1/query/spikes?kind=unknownType", "kind"), ("/v1/query/top?color=red", "color"),
            ("/v1/query/spikes?from=2026-11-30T10:00:00Z&to=2026-11-30T06:00:00Z", "from"),
            ("/v1/query/report?week=2026-W99", "week"), ("/v1/query/report?format=pdf", "format"),
        ] {
            let answer = try Self.get(serve, path, key: Self.allKey)
            #expect(answer.status == 400, "\(path): \(answer.text)")
            #expect(answer.text.contains(#""path":"\#(parameter)""#), "\(path): \(answer.text)")
            #expect(answer.text.contains(#""error":"invalid_parameter""#), "\(path): \(answer.text)")
        }
    }

    @Test func theWeeklyReportInEachFormat() async throws {
        let seeded = try SeededStore()
        let serve = try await Self.serve(seeded)
        defer { _ = serve.child.terminate(timeout: .seconds(20)) }
        for (format, type, marker) in [
            ("json", "application/json", #""week""#), ("md", "text/markdown; charset=utf-8", "# "),
            ("html", "text/html; charset=utf-8", "<!doctype html>"),
        ] {
            let answer = try Self.get(serve, "/v1/query/report?week=2026-W49&format=\(format)", key: Self.allKey)
            #expect(answer.status == 200, "\(format): \(answer.text)")
            #expect(answer.header("Content-Type") == type)
            #expect(answer.text.lowercased().contains(marker.lowercased()), "\(format): \(answer.text.prefix(300))")
        }
        // The shop key reads one app: its report is the shop's.
        let shop = try Self.get(serve, "/v1/query/report?week=2026-W49&format=json", key: Self.shopKey)
        #expect(shop.status == 200 && !shop.text.contains("com.example.reader"), "\(shop.text)")
    }

    @Test func teamUsesServesOwnersFileAsTheCLIsTeamDoes() async throws {
        let seeded = try SeededStore()
        let owners = seeded.directory.file("owners.json")
        try Data(#"{"defaultTeam": "platform", "rules": [{"widgetType": "video_*", "team": "media"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: owners))
        let serve = try await Self.serve(seeded, owners: owners)
        defer { _ = serve.child.terminate(timeout: .seconds(20)) }
        for (query, team) in [("spikes", "media"), ("spikes", "platform"), ("ungated", "platform"), ("top", "media")] {
            let expected = try await FlowmeterExecutable.run(
                [query, "--store", seeded.path, "--owners", owners, "--team", team, "--format", "json"]
                    + ["--from", SeededStore.from, "--to", SeededStore.to])
            let answer = try Self.get(serve, "/v1/query/\(query)?\(Self.window)&team=\(team)", key: Self.allKey)
            #expect(answer.status == 200, "\(query) \(team): \(answer.text)")
            #expect(
                Self.withoutFreshness(answer.text) == Self.withoutFreshness(expected.output), "\(query) \(team)")
        }
        let media = try Self.get(serve, "/v1/query/spikes?\(Self.window)&team=media", key: Self.allKey)
        #expect(media.text.contains("video_tile") && !media.text.contains("hologram_projector"), "\(media.text)")
    }

    // MARK: helpers

    static func serve(_ seeded: SeededStore, logLevel: String = "warning", owners: String? = nil) async throws
        -> ServerProcess
    {
        let keys = seeded.directory.file("keys.json")
        try Data(
            """
            {"ingestKeys": [{"key": "\(ingestKey)", "apps": ["*"]}],
             "readKeys": [{"key": "\(allKey)", "apps": ["*"]}, {"key": "\(shopKey)", "apps": ["com.example.shop"]}],
             "adminKeys": ["admin-key"]}
            """.utf8
        ).write(to: URL(fileURLWithPath: keys))
        return try await FlowmeterExecutable.serve(
            [
                "--kafka", "none", "--store", seeded.path, "--keys", keys, "--prune-interval", "0",
                "--detect-interval", "0", "--log-level", logLevel, "--salt", "00112233445566778899aabbccddeeff",
            ] + (owners.map { ["--owners", $0] } ?? []), within: .seconds(20), attempts: 3)
    }

    struct Answer {
        var status: Int
        var text: String
        var headers: [(name: String, value: String)]
        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    }

    static func get(_ serve: ServerProcess, _ path: String, key: String?) throws -> Answer {
        let client = try HTTPTestClient(port: serve.port, readTimeout: .seconds(30))
        defer { client.close() }
        var headers: [(String, String)] = []
        if let key { headers.append(("Authorization", "Bearer \(key)")) }
        let response = try client.request("GET", path, headers: headers)
        return Answer(
            status: response.status, text: String(decoding: response.body, as: UTF8.self), headers: response.headers)
    }

    /// The JSON without its `freshness` member (it says how old the data is at the moment of asking).
    static func withoutFreshness(_ text: String) -> String {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            return text
        }
        object.removeValue(forKey: "freshness")
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? text
    }
}
