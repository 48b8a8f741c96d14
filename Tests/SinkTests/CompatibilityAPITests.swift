import Foundation
import TestSupport
import Testing

/// `GET /v1/compatibility` (docs/api.md#reading) against the real binary: `flowmeter serve --kafka none --store …` as a
/// process, fed through its own HTTP endpoints.
@Suite struct CompatibilityAPITests {
    static let ingestKey = "key-ingest-0123456789"
    static let adminKey = "key-admin-0123456789"
    static let shopReader = "key-read-shop-0123456789"
    static let otherReader = "key-read-other-0123456789"
    static let app = "com.example.shop"

    /// A serve process with read keys, an SQLite store and answers refreshed every second.
    final class Server: Sendable {
        let directory: TemporaryDirectory
        let process: ServerProcess

        init() async throws {
            directory = try TemporaryDirectory(prefix: "flowmeter-compat")
            let keys = directory.file("keys.json")
            try Data(
                """
                {"ingestKeys": [{"key": "\(CompatibilityAPITests.ingestKey)", "apps": ["*"]}],
                 "adminKeys": ["\(CompatibilityAPITests.adminKey)"],
                 "readKeys": [{"key": "\(CompatibilityAPITests.shopReader)", "apps": ["\(CompatibilityAPITests.app)"]},
                              {"key": "\(CompatibilityAPITests.otherReader)", "apps": ["com.example.other"]}]}
                """.utf8
            ).write(to: URL(fileURLWithPath: keys))
            process = try await FlowmeterExecutable.serve(
                [
                    "--keys", keys, "--salt", "00112233445566778899aabbccddeeff", "--kafka", "none",
                    "--store", directory.file("store.sqlite"), "--spool", "none", "--detect-interval", "0",
                    "--compatibility-refresh", "1s", "--log-level", "warning", "--dead-letters",
                    directory.file("dead.jsonl"),
                ], within: .seconds(30))
        }

        deinit {
            process.child.terminate(timeout: .zero)
            directory.remove()
        }

        func request(
            _ method: String, _ path: String, key: String?, headers extra: [(String, String)] = [], body: String? = nil
        ) async throws -> HTTPTestResponse {
            let port = process.port
            var headers = extra
            if body != nil { headers.append(("Content-Type", "application/json")) }
            if let key { headers.append(("Authorization", "Bearer \(key)")) }
            let sent = headers
            return try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port, readTimeout: .seconds(15))
                defer { client.close() }
                return try client.request(method, path, headers: sent, body: body.map { Array($0.utf8) })
            }
        }

        func compatibility(
            version: String, build: String? = nil, key: String? = CompatibilityAPITests.shopReader,
            app: String = CompatibilityAPITests.app, headers: [(String, String)] = []
        ) async throws -> HTTPTestResponse {
            var path = "/v1/compatibility?appID=\(app)&platform=ios&appVersion=\(version)"
            if let build { path += "&build=\(build)" }
            return try await request("GET", path, key: key, headers: headers)
        }

        /// One batch from `version` (and `build` when given), with `capabilities` when given and one event per (kind,
        /// type).
        func postBatch(
            id: String, version: String, build: String? = nil, registeredTypes: [String]?, events: [(String, String)]
        ) async throws -> HTTPTestResponse {
            let now = Date()
            let capabilities =
                registeredTypes.map {
                    #","capabilities":{"maxSchemaVersion":1,"registeredTypes":["#
                        + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
                } ?? ""
            let items = events.map { kind, type in
                #"{"kind":"\#(kind)","widgetType":"\#(type)","backendRelease":"page-api@1","#
                    + #""occurredAt":"\#(now.addingTimeInterval(-5).formatted(.iso8601))"}"#
            }
            let body =
                #"{"id":"\#(id)","sentAt":"\#(now.formatted(.iso8601))","client":{"appID":"\#(CompatibilityAPITests.app)","#
                + #""appVersion":"\#(version)","platform":"ios","buildConfiguration":"release","#
                + (build.map { #""build":"\#($0)","# } ?? "")
                + #""installID":"install-\#(id)"\#(capabilities)},"decodes":4,"events":[\#(items.joined(separator: ","))]}"#
            return try await request("POST", "/v1/diagnostics", key: CompatibilityAPITests.ingestKey, body: body)
        }
    }

    private static func json(_ response: HTTPTestResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func answersFromManifestCapabilitiesAndTrafficWithETagsAndReadKeys() async throws {
        let server = try await Server()
        // Keys first: none is 401, another app's read key 403, a missing parameter 400.
        #expect(try await server.compatibility(version: "5.3.0", key: nil).status == 401)
        #expect(try await server.compatibility(version: "5.3.0", key: "not-a-key-0123456789").status == 401)
        #expect(try await server.compatibility(version: "5.3.0", key: Self.otherReader).status == 403)
        #expect(try await server.compatibility(version: "5.3.0", key: Self.ingestKey).status == 401)
        let missing = try await server.request("GET", "/v1/compatibility?appID=\(Self.app)", key: Self.shopReader)
        #expect(missing.status == 400)

        // A read key writes nothing.
        let write = try await server.postBatch(
            id: "read-key-batch", version: "5.3.0", registeredTypes: nil, events: [("unknownType", "x")])
        #expect(write.status == 202)  // with the ingest key: the control
        let byReader = try await server.request(
            "POST", "/v1/diagnostics", key: Self.shopReader, body: #"{"client":{},"events":[]}"#)
        #expect(byReader.status == 401)
        let manifestByReader = try await server.request(
            "POST", "/v1/manifests", key: Self.shopReader,
            body: #"{"appID":"\#(Self.app)","appVersion":"5.3.0","platform":"ios","types":{}}"#)
        #expect([401, 403].contains(manifestByReader.status))
        let deployByReader = try await server.request(
            "POST", "/v1/deploys", key: Self.shopReader,
            body: #"{"service":"page-api","version":"1","finishedAt":"2026-11-30T08:44:10Z"}"#)
        #expect([401, 403].contains(deployByReader.status))

        // 5.3.0: two builds uploaded manifests; the newer answers a request without a build.
        for (build, kicker) in [("5299", false), ("5300", true)] {
            let optional = kicker ? #"["imageURL","kicker"]"# : #"["imageURL"]"#
            let manifest =
                #"{"appID":"\#(Self.app)","appVersion":"5.3.0","platform":"ios","build":"\#(build)","#
                + #""types":{"image_text_card":{"required":["title"],"optional":\#(optional)},"#
                + #""title_block":{"required":["text"]}},"arrangements":["vertical","horizontal"]}"#
            let uploaded = try await server.request("POST", "/v1/manifests", key: Self.adminKey, body: manifest)
            try #require(uploaded.status == 201, "manifest upload answered \(uploaded.status): \(uploaded.bodyText)")
        }
        // 5.2.1 sends capabilities; 5.1.0 sends none, only diagnostics.
        let withCapabilities = try await server.postBatch(
            id: "caps", version: "5.2.1", registeredTypes: ["image_text_card", "title_block"],
            events: [("unknownType", "hologram_projector")])
        #expect(withCapabilities.status == 202)
        let bare = try await server.postBatch(
            id: "bare", version: "5.1.0", registeredTypes: nil,
            events: [("malformedPayload", "title_block"), ("unknownType", "carousel")])
        #expect(bare.status == 202)

        var answered: HTTPTestResponse?
        #expect(
            try await eventually {
                let manifest = try await server.compatibility(version: "5.3.0")
                answered = manifest
                // Until the refresh after the uploads, 5.3.0 is known from its traffic only.
                guard manifest.status == 200, let answer = try? Self.json(manifest) else { return false }
                return answer["build"] as? String == "5300" && answer["unknownInTraffic"] as? [String] == ["x"]
            })
        let manifest = try #require(answered)
        let fromManifest = try Self.json(manifest)
        #expect(fromManifest["source"] as? String == "manifest")
        #expect(fromManifest["build"] as? String == "5300")
        #expect(fromManifest["updatedAt"] is String)
        let types = try #require(fromManifest["types"] as? [String: [String: [String]]])
        #expect(types["image_text_card"] == ["required": ["title"], "optional": ["imageURL", "kicker"]])
        #expect(types["title_block"] == ["required": ["text"], "optional": []])
        #expect(fromManifest["arrangements"] as? [String] == ["horizontal", "vertical"])
        #expect(fromManifest["unknownInTraffic"] as? [String] == ["x"])
        #expect(manifest.header("Cache-Control") == "max-age=300")
        let etag = try #require(manifest.header("ETag"))

        let older = try Self.json(try await server.compatibility(version: "5.3.0", build: "5299"))
        #expect(older["build"] as? String == "5299")
        #expect(
            (older["types"] as? [String: [String: [String]]])?["image_text_card"]?["optional"] == ["imageURL"])

        // ETag: the same answer with If-None-Match is 304, another tag gets the body.
        let notModified = try await server.compatibility(version: "5.3.0", headers: [("If-None-Match", etag)])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(notModified.header("ETag") == etag)
        let changed = try await server.compatibility(version: "5.3.0", headers: [("If-None-Match", "\"other\"")])
        #expect(changed.status == 200)

        var answers: (HTTPTestResponse, HTTPTestResponse)?
        #expect(
            try await eventually {
                let capabilities = try await server.compatibility(version: "5.2.1")
                let traffic = try await server.compatibility(version: "5.1.0")
                answers = (capabilities, traffic)
                return capabilities.status == 200 && traffic.status == 200
                    && (try? Self.json(traffic)["unknownInTraffic"] as? [String]) == ["carousel"]
                    && (try? Self.json(capabilities)["unknownInTraffic"] as? [String]) == ["hologram_projector"]
            })
        let (capabilities, traffic) = try #require(answers)
        let fromCapabilities = try Self.json(capabilities)
        #expect(fromCapabilities["source"] as? String == "capabilities")
        #expect(fromCapabilities["build"] is NSNull)
        #expect(
            (fromCapabilities["types"] as? [String: Any]).map { Set($0.keys) } == ["image_text_card", "title_block"])
        #expect(fromCapabilities["unknownInTraffic"] as? [String] == ["hologram_projector"])
        let fromTraffic = try Self.json(traffic)
        #expect(fromTraffic["source"] as? String == "traffic")
        #expect((fromTraffic["types"] as? [String: Any]).map { Set($0.keys) } == ["title_block"])
        #expect(fromTraffic["unknownInTraffic"] as? [String] == ["carousel"])

        // A build no manifest describes falls back to the version's capabilities; a version nobody saw is 404.
        let otherBuild = try Self.json(try await server.compatibility(version: "5.2.1", build: "5219"))
        #expect(otherBuild["source"] as? String == "capabilities")
        let unknown = try await server.compatibility(version: "9.9.9")
        #expect(unknown.status == 404)
        #expect(try Self.json(unknown)["error"] as? String == "unknown_build")
        // An admin key reads every app.
        #expect(try await server.compatibility(version: "5.3.0", key: Self.adminKey).status == 200)
    }
}

extension CompatibilityAPITests {
    /// The builds batches name (`client.build`) answer for themselves: a request for one gets the version's
    /// capabilities or traffic with that build, a request without a build the newest build seen, a build neither a
    /// manifest nor a batch named is 404, and a version whose batches name no build answers with `"build": null`.
    @Test func capabilitiesAndTrafficAnswerForTheBuildsTheBatchesNamed() async throws {
        let server = try await Server()
        for (id, build) in [("b600", "600"), ("b601", "601")] {
            let posted = try await server.postBatch(
                id: id, version: "6.0.0", build: build, registeredTypes: ["title_block", "image_text_card"],
                events: [("unknownType", "hologram_projector")])
            #expect(posted.status == 202)
        }
        let bare = try await server.postBatch(
            id: "b610", version: "6.1.0", build: "610", registeredTypes: nil, events: [("malformedPayload", "map")])
        #expect(bare.status == 202)
        let unnamed = try await server.postBatch(
            id: "b620", version: "6.2.0", registeredTypes: ["title_block"], events: [])
        #expect(unnamed.status == 202)

        var seen: [String: Any]?
        #expect(
            try await eventually {
                let newest = try await server.compatibility(version: "6.0.0")
                let traffic = try await server.compatibility(version: "6.1.0")
                let noBuild = try await server.compatibility(version: "6.2.0")
                guard newest.status == 200, traffic.status == 200, noBuild.status == 200,
                    let answer = try? Self.json(newest)
                else { return false }
                seen = answer
                return answer["build"] as? String == "601"
            })
        let newest = try #require(seen)
        #expect(newest["source"] as? String == "capabilities")
        #expect((newest["types"] as? [String: Any]).map { Set($0.keys) } == ["image_text_card", "title_block"])
        #expect(newest["updatedAt"] is String)

        let older = try Self.json(try await server.compatibility(version: "6.0.0", build: "600"))
        #expect(older["build"] as? String == "600")
        #expect(older["source"] as? String == "capabilities")
        #expect(older["unknownInTraffic"] as? [String] == ["hologram_projector"])
        let unknown = try await server.compatibility(version: "6.0.0", build: "599")
        #expect(unknown.status == 404)
        #expect(try Self.json(unknown)["error"] as? String == "unknown_build")

        let traffic = try Self.json(try await server.compatibility(version: "6.1.0", build: "610"))
        #expect(traffic["source"] as? String == "traffic")
        #expect(traffic["build"] as? String == "610")
        #expect((traffic["types"] as? [String: Any]).map { Set($0.keys) } == ["map"])
        #expect(try Self.json(try await server.compatibility(version: "6.1.0"))["build"] as? String == "610")

        // No batch of 6.2.0 named a build: whatever build is asked for, the version's answer, without a build.
        for build in [nil, "620"] as [String?] {
            let answer = try Self.json(try await server.compatibility(version: "6.2.0", build: build))
            #expect(answer["source"] as? String == "capabilities")
            #expect(answer["build"] is NSNull)
        }

        // A manifest still comes first, for its build and for a request without a build.
        let manifest =
            #"{"appID":"\#(Self.app)","appVersion":"6.0.0","platform":"ios","build":"600","#
            + #""types":{"title_block":{"required":["text"]}}}"#
        let uploaded = try await server.request("POST", "/v1/manifests", key: Self.adminKey, body: manifest)
        try #require(uploaded.status == 201)
        #expect(
            try await eventually {
                let answer = try await server.compatibility(version: "6.0.0", build: "600")
                return (try? Self.json(answer)["source"] as? String) == "manifest"
            })
        let withoutBuild = try Self.json(try await server.compatibility(version: "6.0.0"))
        #expect(withoutBuild["source"] as? String == "manifest")
        #expect(withoutBuild["build"] as? String == "600")
        let seenOnly = try Self.json(try await server.compatibility(version: "6.0.0", build: "601"))
        #expect(seenOnly["source"] as? String == "capabilities")
        #expect(seenOnly["build"] as? String == "601")
    }
}

/// The page backend example (Examples/compatibility-client, Python) against the real server: it asks, caches,
/// revalidates, and drops or swaps what the build cannot draw.
@Suite struct CompatibilityClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/compatibility-client/compatibility_client.py")
        .path

    @Test func theExampleClientSwapsAndDropsWhatTheBuildCannotDraw() async throws {
        let server = try await CompatibilityAPITests.Server()
        let manifest =
            #"{"appID":"\#(CompatibilityAPITests.app)","appVersion":"5.3.0","platform":"ios","build":"5300","#
            + #""types":{"image_text_card":{"required":["title"],"optional":["imageURL"]},"#
            + #""title_block":{"required":["text"]}}}"#
        let uploaded = try await server.request(
            "POST", "/v1/manifests", key: CompatibilityAPITests.adminKey, body: manifest)
        try #require(uploaded.status == 201)
        #expect(
            try await eventually {
                try await server.compatibility(version: "5.3.0").status == 200
            })
        let page = server.directory.file("page.json")
        try Data(
            #"""
            {"page": "home", "sections": [{"widgets": [
              {"type": "title_block", "data": {"text": "Hello"}},
              {"type": "hologram_projector", "data": {"model": "x"}},
              {"type": "title_block", "data": {}},
              {"type": "accordion", "data": {"children": []}}]}]}
            """#.utf8
        ).write(to: URL(fileURLWithPath: page))
        let run = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "python3", Self.script, "--url", "http://127.0.0.1:\(server.process.port)", "--key",
                CompatibilityAPITests.shopReader, "--app", CompatibilityAPITests.app, "--platform", "ios", "--version",
                "5.3.0", page,
            ])
        try #require(run.status == 0, "the client failed: \(run.errors)")
        let filtered = try #require(
            JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let sections = try #require(filtered["sections"] as? [[String: Any]])
        let widgets = try #require(sections.first?["widgets"] as? [[String: Any]])
        // Kept: the title with its text; swapped: the hologram for a card; dropped: the title without text and the
        // accordion 5.3.0 does not register.
        #expect(widgets.compactMap { $0["type"] as? String } == ["title_block", "image_text_card"])
    }
}
