import FlowmeterModels
import Foundation
import TestSupport
import Testing

/// What goes in comes out the same (issue 9): the nastiest legal identifiers and free text, posted to a real
/// `serve --kafka embedded --store`, travel collector → Kafka → sink → SQLite → the query commands and come back
/// exactly as sent, while a control character in an identifier is dropped at the edge and the rest still counts.
@Suite(.serialized) struct RoundTripTests {
    /// Legal identifiers that each break something naive: SQL quoting, JSON escaping, C strings, terminals, UTF-8
    /// width, spreadsheets, HTML.
    static let widgetTypes = [
        "'; DROP TABLE series; --", "quote\"back\\slash/", "😀🇫🇷 emoji", "\u{202E}evil\u{202C}", "line\u{2028}sep",
        "e\u{301}\u{301} combining", "\u{FFFD}replacement", String(repeating: "é", count: 128),
        "=HYPERLINK(\"http://x\")", "<script>alert(1)</script>", "%s%n%x", "  padded  ", "日本語タイプ",
    ]
    static let appVersion = "5.2.1 (5210) ‘β’"
    static let message = "nul\u{0}esc\u{1B}[2Jbell\u{7}\r\nc1\u{85}del\u{7F}"

    @Test func nastyLegalStringsComeBackFromEveryReaderAsTheyWent() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-round-trip")
        defer { directory.remove() }
        let storePath = directory.file("round-trip.sqlite")
        let serve = try await HostileRunTests.startServe(in: directory, store: storePath)
        defer { serve.child.terminate(timeout: .zero) }

        let now = Timestamp(Date())
        let events = Self.widgetTypes.map { type in
            DiagnosticEvent(
                kind: .unknownType, widgetType: type, codingPath: Self.message, message: Self.message,
                pageID: "home\u{A0}page", backendRelease: "page-api@" + type, occurredAt: now)
        }
        let batch = DiagnosticBatch(
            id: "round-trip-1", sentAt: now,
            client: ClientInfo(
                appID: "com.example.'shop\"", appVersion: Self.appVersion, platform: "ios", installID: "install-1"),
            events: events)
        // One more event whose kind holds a control character: dropped at the edge, the batch still taken.
        var object = try #require(
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(batch)) as? [String: Any])
        var list = try #require(object["events"] as? [Any])
        list.append(["kind": "\u{0}", "widgetType": "x", "occurredAt": now.rfc3339String])
        object["events"] = list
        let body = Array(try JSONSerialization.data(withJSONObject: object))
        let client = try HTTPTestClient(port: serve.port)
        defer { client.close() }
        let answer = try client.request(
            "POST", "/v1/diagnostics",
            headers: [
                ("Authorization", "Bearer \(HostileRunTests.ingestKey)"), ("Content-Type", "application/json"),
            ], body: body)
        #expect(answer.status == 202, "\(answer.bodyText)")
        let accepted = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        #expect(accepted["accepted"] as? Int == Self.widgetTypes.count)
        #expect(accepted["dropped"] as? Int == 1)
        let diagnostics = try #require(accepted["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["path"] as? String == "events.Index \(Self.widgetTypes.count).kind")

        #expect(try await HostileRunTests.waitForVersion(Self.appVersion, in: storePath))

        let top = await CLI.run(["top", "--format", "json", "--store", storePath, "--since", "1h"])
        #expect(top.status == 0, "\(top.standardError)")
        let rows = try #require(try CLI.json(top)["top"] as? [[String: Any]])
        #expect(Set(rows.compactMap { $0["widgetType"] as? String }) == Set(Self.widgetTypes))
        #expect(rows.allSatisfy { $0["appID"] as? String == "com.example.'shop\"" })
        #expect(rows.allSatisfy { $0["appVersion"] as? String == Self.appVersion })

        let ungated = await CLI.run(
            [
                "ungated", "--format", "json", "--store", storePath, "--since", "1h", "--min-installs", "1",
                "--min-events", "1",
            ])
        #expect([0, 3].contains(ungated.status), "\(ungated.standardError)")
        let types = try #require(try CLI.json(ungated)["ungated"] as? [[String: Any]])
        #expect(Set(types.compactMap { $0["widgetType"] as? String }) == Set(Self.widgetTypes))

        // The table shows the same names escaped, never raw: no terminal escape or line break from the data.
        let table = await CLI.run(["top", "--store", storePath, "--since", "1h"])
        #expect(table.status == 0)
        #expect(!table.standardOutput.unicodeScalars.contains { DisplaySafety.mustEscape($0) && $0 != "\n" })
        #expect(table.standardOutput.contains("'; DROP TABLE series; --"))
    }
}
