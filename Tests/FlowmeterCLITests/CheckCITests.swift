import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport
import Testing

/// `flowmeter check` in CI: many payloads at once, SARIF read back by a SARIF library (sarif-tools, from PyPI), JUnit
/// parsed by Python's XML parser, GitHub workflow annotations at the widget's line, approvals that expire, zero
/// traffic, and Examples/ci's command lines run as written.
@Suite struct CheckCITests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The seeded store with manifests, and the two payloads: one that fails (`image_text_card` lacks `imageURL` for
    /// 5.2.1 and a badge label for 5.3.0 and 5.4.0), one that passes.
    static func checked(_ format: String, extra: [String] = []) async throws -> (CLI.Result, SeededStore) {
        let store = try await ManifestCheckTests.store()
        let result = await CLI.run(
            [
                "check", try CLI.fixture("page-drop-key.json"), try CLI.fixture("page-additive.json"), "--format",
                format,
                "--app", "com.example.shop",
            ] + extra + store.window)
        return (result, store)
    }

    /// The 1-based line of the first line of `fixture` containing `text`.
    static func line(of text: String, in fixture: String) throws -> Int {
        let lines = try CLI.fixtureText(fixture).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.contains(text) }) + 1
    }

    static func python(_ script: String, _ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run("/usr/bin/env", ["/usr/bin/python3", "-c", script] + arguments)
    }

    @Test func sarifIsReadBackBySarifToolsWithWhatCodeScanningNeeds() async throws {
        let (result, store) = try await Self.checked("sarif")
        #expect(result.status == 3, "\(result.standardError)")
        let file = store.directory.file("check.sarif")
        try Data(result.standardOutput.utf8).write(to: URL(fileURLWithPath: file))
        // sarif-tools loads it as SARIF and lists its results; the fields code scanning reads are checked as JSON.
        let read = try await Self.python(
            """
            import json, sys
            from sarif import loader
            data = loader.load_sarif_file(sys.argv[1])
            results = data.get_results()
            assert data.get_distinct_tool_names() == ["flowmeter"], data.get_distinct_tool_names()
            document = json.load(open(sys.argv[1]))
            assert document["version"] == "2.1.0"
            run = document["runs"][0]
            rules = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
            for result in run["results"]:
                assert result["ruleId"] in rules and result["level"] in ("error", "warning", "note")
                assert result["message"]["text"]
                location = result["locations"][0]["physicalLocation"]
                print(result["ruleId"], result["level"], location["artifactLocation"]["uri"].split("/")[-1],
                      location["region"]["startLine"], result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"])
            print("results", len(results))
            """, [file])
        try #require(read.status == 0, "sarif-tools could not read it: \(read.errors)")
        let lines = read.output.split(separator: "\n").map(String.init)
        let sheetLine = try Self.line(of: #""sheet""#, in: "page-drop-key.json")
        // The missing imageURL is reported first at the header's sheet, whose data object is on the sheet's line.
        let imageURL = try #require(
            lines.first { $0.hasPrefix("malformedPayload error page-drop-key.json") && $0.hasSuffix("sheet.data") })
        let fields = imageURL.split(separator: " ")
        let line = try #require(Int(fields[3]))
        #expect(line == sheetLine, "\(imageURL)")
        #expect(fields[4] == "page.header.sheet.data")
        #expect(!lines.contains { $0.contains("page-additive.json") && $0.contains(" error ") })
        #expect(lines.last?.hasPrefix("results ") == true)
    }

    @Test func junitParsesWithAFailurePerBreakingFindingAndASuitePerPayload() async throws {
        let (result, store) = try await Self.checked("junit")
        #expect(result.status == 3)
        let file = store.directory.file("check.xml")
        try Data(result.standardOutput.utf8).write(to: URL(fileURLWithPath: file))
        let parsed = try await Self.python(
            """
            import sys, xml.etree.ElementTree as tree
            root = tree.parse(sys.argv[1]).getroot()
            assert root.tag == "testsuites"
            for suite in root.findall("testsuite"):
                print(suite.get("name").split("/")[-1], suite.get("failures"),
                      ",".join(sorted(case.find("failure").get("type") for case in suite.findall("testcase")
                                      if case.find("failure") is not None)))
            """, [file])
        try #require(parsed.status == 0, "\(parsed.errors)")
        #expect(
            parsed.output.split(separator: "\n") == [
                "page-drop-key.json 2 malformedPayload,malformedPayload", "page-additive.json 0 ",
            ], "\(parsed.output)")
    }

    @Test func githubAnnotationsPointAtTheWidgetsLine() async throws {
        let (result, _) = try await Self.checked("github")
        #expect(result.status == 3)
        let annotations = result.standardOutput.split(separator: "\n").map(String.init)
        let errors = annotations.filter { $0.hasPrefix("::error ") }
        #expect(errors.count == 2, "\(annotations)")
        let pattern = try Regex(#"^::(error|warning|notice) file=[^,]+,line=\d+,title=[^:]+::.+$"#)
        #expect(annotations.allSatisfy { $0.wholeMatch(of: pattern) != nil }, "\(annotations)")
        let label = try #require(errors.first { $0.contains("badges[].label") })
        let badge = try Self.line(of: #"{"color": "red"}"#, in: "page-drop-key.json")
        #expect(label.contains("page-drop-key.json,line="), "\(label)")
        #expect(label.contains("title=flowmeter malformedPayload%3A image_text_card::"))
        let line = try #require(Int(label.split(separator: "line=")[1].prefix { $0.isNumber }))
        #expect(line == badge, "\(label) vs line \(badge)")
    }

    @Test func approvalsHoldUntilTheyExpireThenFailAgain() async throws {
        let store = try await ManifestCheckTests.store()
        let approvals = store.directory.file("approvals.json")
        func approve(_ expires: String) throws {
            try Data(
                """
                {"approvals": [
                  {"widgetType": "image_text_card", "kind": "malformedPayload", "key": "imageURL",
                   "reason": "5.2.1 shows no image", "owner": "team-pages", "expires": "\(expires)"},
                  {"widgetType": "image_text_card", "key": "badges[].label",
                   "reason": "label optional in practice", "owner": "team-pages", "expires": "\(expires)"}]}
                """.utf8
            ).write(to: URL(fileURLWithPath: approvals))
        }
        let tomorrow = Timestamp(secondsSinceEpoch: Timestamp(Date()).secondsSinceEpoch + 86_400)
        try approve(String(tomorrow.rfc3339String.prefix(10)))
        let arguments = [
            "check", try CLI.fixture("page-drop-key.json"), "--format", "github", "--approvals", approvals,
            "--app", "com.example.shop",
        ]
        let approved = await CLI.run(arguments + store.window)
        #expect(approved.status == 0, "\(approved.standardOutput)")
        #expect(!approved.standardOutput.contains("::error"))
        #expect(approved.standardOutput.contains("::notice"))
        #expect(approved.standardOutput.contains("Approved by team-pages until"))

        let yesterday = Timestamp(secondsSinceEpoch: Timestamp(Date()).secondsSinceEpoch - 86_400)
        try approve(String(yesterday.rfc3339String.prefix(10)))
        let expired = await CLI.run(arguments + store.window)
        #expect(expired.status == 3)
        #expect(expired.standardOutput.contains("::error"))
        #expect(expired.standardOutput.contains("expired on"))
    }

    @Test func zeroTrafficJudgesByManifestsOrSaysWhatIsUnknown() async throws {
        // A window with no traffic: the manifests answer exactly.
        let store = try await ManifestCheckTests.store()
        let empty = ["--from", "2026-10-01T00:00:00Z", "--to", "2026-10-01T01:00:00Z", "--store", store.path]
        let judged = await CLI.run(
            ["check", try CLI.fixture("page-drop-key.json"), "--format", "github", "--app", "com.example.shop"] + empty)
        #expect(judged.status == 3)
        #expect(judged.standardError.contains("judged by the manifests alone"))
        #expect(judged.standardOutput.contains("lacks 'imageURL', which the manifests of com.example.shop 5.2.1"))

        // No traffic and no manifests: every type is reported as not judged, and nothing fails.
        let bare = try SeededStore()
        let unknown = await CLI.run(
            [
                "check", try CLI.fixture("page-drop-key.json"), "--format", "sarif", "--app", "com.example.other",
                "--from", "2026-10-01T00:00:00Z", "--to", "2026-10-01T01:00:00Z", "--store", bare.path,
            ])
        #expect(unknown.status == 0)
        #expect(unknown.standardError.contains("not judged"))
        #expect(
            unknown.standardOutput.contains(#""ruleId": "noTraffic""#), "\(unknown.standardOutput)")
    }

    @Test func aDirectoryOfPayloadsIsCheckedFileByFile() async throws {
        let store = try await ManifestCheckTests.store()
        let pages = store.directory.file("pages")
        try FileManager.default.createDirectory(atPath: pages + "/nested", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try CLI.fixture("page-drop-key.json"), toPath: pages + "/a.json")
        try FileManager.default.copyItem(
            atPath: try CLI.fixture("page-additive.json"), toPath: pages + "/nested/b.json")
        let result = await CLI.run(
            ["check", pages, "--format", "json", "--app", "com.example.shop"] + store.window)
        #expect(result.status == 3)
        let payloads = try #require(try CLI.json(result)["payloads"] as? [[String: Any]])
        #expect(payloads.compactMap { $0["payload"] as? String } == [pages + "/a.json", pages + "/nested/b.json"])
    }

    /// Examples/ci's workflow and job: every `flowmeter check` line, run by bash as written with the real binary on
    /// PATH and FLOWMETER_STORE naming a store with traffic from the last hour.
    @Test func theExampleCIJobsRunAsWritten() async throws {
        let executable = try FlowmeterExecutable.requiredPath()
        let work = try TemporaryDirectory(prefix: "flowmeter-ci")
        defer { work.remove() }
        let store = work.file("store.sqlite")
        try Self.seedRecentTraffic(at: store)
        for version in ["5.2.1", "5.3.0", "5.4.0"] {
            let upload = await CLI.run(
                ["manifests", "upload", try CLI.fixture("manifest-shop-\(version).json"), "--store", store])
            try #require(upload.status == 0, "\(upload.standardError)")
        }
        try FileManager.default.createDirectory(atPath: work.file("fixtures/pages"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work.file("ci"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: try CLI.fixture("page-drop-key.json"), toPath: work.file("fixtures/pages/home.json"))
        try FileManager.default.copyItem(
            atPath: Self.repository.appendingPathComponent("Examples/ci/flowmeter-approvals.json").path,
            toPath: work.file("ci/flowmeter-approvals.json"))
        var lines: [String] = []
        for file in ["github-actions.yml", "gitlab-ci.yml"] {
            let text = try String(
                contentsOf: Self.repository.appendingPathComponent("Examples/ci/\(file)"), encoding: .utf8)
            for line in text.split(separator: "\n") {
                var command = line.drop { $0 == " " || $0 == "-" }
                if command.hasPrefix("run: ") { command = command.dropFirst(5) }
                if command.hasPrefix("flowmeter check ") { lines.append(String(command)) }
            }
        }
        #expect(lines.count == 3, "\(lines)")
        let binDirectory = URL(fileURLWithPath: executable).deletingLastPathComponent().path
        var outcomes: [Int32] = []
        for line in lines {
            let run = try await ChildProcess.run(
                "/bin/bash",
                [
                    "-c",
                    "cd '\(work.path)' && export PATH='\(binDirectory)':\"$PATH\" FLOWMETER_STORE='\(store)' && \(line)",
                ])
            outcomes.append(run.status)
            if line.contains("--format github") {
                #expect(run.output.contains("::error file=fixtures/pages/home.json,line="), "\(run.output)")
            }
        }
        // The annotations and the JUnit job fail (a badge label 5.3.0 and 5.4.0 require is missing); the SARIF step
        // keeps going so the upload step can run.
        #expect(outcomes == [3, 0, 3], "\(lines)")
        let sarif = try String(contentsOfFile: work.file("flowmeter.sarif"), encoding: .utf8)
        #expect(
            sarif.contains(#""uri": "fixtures/pages/home.json""#), "\(sarif)")
        let junit = try String(contentsOfFile: work.file("flowmeter-junit.xml"), encoding: .utf8)
        #expect(junit.contains("<failure type=\"malformedPayload\""))
    }

    /// Shop traffic in the last hour: 5.2.1 (40 installs), 5.3.0 (50) and 5.4.0 (10), with capabilities.
    static func seedRecentTraffic(at path: String) throws {
        let store = try openRollupStore(url: path)
        let now = Timestamp(Date()).secondsSinceEpoch / 60 * 60
        var partials: [PartialRollup] = []
        for (version, installs) in [("5.2.1", 40), ("5.3.0", 50), ("5.4.0", 10)] {
            let rollup = VersionRollup(
                key: VersionKey(
                    appID: "com.example.shop", platform: "ios", appVersion: version, buildConfiguration: .release),
                window: MinuteWindow(start: now - 1800), batches: 20, cleanBatches: 20, decodes: 200,
                installs: SeededStore.sketch(installs, prefix: "recent-\(version)"),
                registeredTypes: SeededStore.shopTypes, maxSchemaVersion: 7)
            partials.append(PartialRollup(id: "recent/\(version)", collector: "test", rollup: .version(rollup)))
        }
        _ = try store.apply(partials)
    }
}

/// The weekly report lists check approvals that expire soon (or have expired), from `--approvals`.
@Suite struct ReportApprovalsTests {
    @Test func approvalsExpiringWithinTwoWeeksAreListed() async throws {
        let store = try SeededStore()
        let approvals = store.directory.file("approvals.json")
        let soon = Timestamp(secondsSinceEpoch: Timestamp(Date()).secondsSinceEpoch + 3 * 86_400)
        let later = Timestamp(secondsSinceEpoch: Timestamp(Date()).secondsSinceEpoch + 90 * 86_400)
        try Data(
            """
            {"approvals": [
              {"widgetType": "image_text_card", "key": "imageURL", "reason": "old builds", "owner": "team-pages",
               "expires": "\(soon.rfc3339String.prefix(10))"},
              {"widgetType": "promo_banner", "reason": "later", "owner": "team-home",
               "expires": "\(later.rfc3339String.prefix(10))"},
              {"widgetType": "video_tile", "reason": "gone", "owner": "team-video", "expires": "2020-01-01"}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: approvals))
        // The report writes to its file (or the process's standard output), not through the captured output.
        let jsonFile = store.directory.file("report.json")
        let json = await CLI.run([
            "report", "--week", "2026-W49", "--format", "json", "--approvals", approvals, "--store", store.path,
            "--output", jsonFile,
        ])
        #expect(json.status == 0, "\(json.standardError)")
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: jsonFile)))
        let listed = try #require((object as? [String: Any])?["approvalsExpiring"] as? [[String: Any]])
        #expect(listed.compactMap { $0["widgetType"] as? String } == ["video_tile", "image_text_card"])
        #expect(listed.first?["expired"] as? Bool == true)
        let markdownFile = store.directory.file("report.md")
        _ = await CLI.run([
            "report", "--week", "2026-W49", "--format", "md", "--approvals", approvals, "--store", store.path,
            "--output", markdownFile,
        ])
        let markdown = try String(contentsOfFile: markdownFile, encoding: .utf8)
        let section = try #require(
            markdown.components(separatedBy: "## Check approvals expiring soon").dropFirst().first?
                .components(separatedBy: "\n## ").first)
        #expect(section.contains("2020-01-01 (expired: failing again)"))
        #expect(section.contains("image_text_card"))
        #expect(!section.contains("promo_banner"))
    }
}

/// NDJSON on standard input, through the real binary: each line one payload, findings at their line of the stream.
@Suite struct CheckStandardInputTests {
    @Test func ndjsonOnStandardInputIsOnePayloadPerLine() async throws {
        let store = try await ManifestCheckTests.store()
        let stream = store.directory.file("pages.ndjson")
        let compact = { (name: String) throws -> String in
            let object = try JSONSerialization.jsonObject(with: Data(try CLI.fixtureText(name).utf8))
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        try Data((try compact("page-additive.json") + "\n\n" + (try compact("page-drop-key.json")) + "\n").utf8)
            .write(to: URL(fileURLWithPath: stream))
        let run = try await ChildProcess.run(
            "/bin/bash",
            [
                "-c",
                "'\(try FlowmeterExecutable.requiredPath())' check - --format github --app com.example.shop "
                    + store.window.joined(separator: " ") + " < '\(stream)'",
            ])
        #expect(run.status == 3, "\(run.errors)")
        let errors = run.output.split(separator: "\n").filter { $0.hasPrefix("::error ") }
        #expect(errors.count == 2, "\(run.output)")
        #expect(errors.allSatisfy { $0.hasPrefix("::error file=stdin,line=3,") }, "\(errors)")
    }
}

/// `flowmeter matrix` on the seeded store: page-api@2026.11.30-2 drew 5.2.1's unknown hologram_projector events.
@Suite struct MatrixCommandTests {
    @Test func releaseByVersionRowsWithTheVersionsCleanRate() async throws {
        let store = try SeededStore()
        let result = await CLI.run(["matrix", "--format", "json", "--app", "com.example.shop"] + store.window)
        #expect(result.status == 0, "\(result.standardError)")
        let json = try CLI.json(result)
        let rows = try #require(json["rows"] as? [[String: Any]])
        let release = try #require(rows.first { $0["release"] as? String == "page-api@2026.11.30-2" })
        #expect(release["appVersion"] as? String == "5.2.1")
        #expect(release["events"] as? Int == 100)
        #expect((release["byKind"] as? [String: Int]) == ["unknownType": 100])
        #expect(release["versionCleanRate"] as? Double == 0.75)
        // 5.3.0's malformed events carry no release.
        #expect(rows.contains { $0["release"] as? String == "(none)" && $0["appVersion"] as? String == "5.3.0" })
        #expect((json["canary"] as? [Any])?.isEmpty == true)
        let table = await CLI.run(["matrix", "--app", "com.example.shop"] + store.window)
        #expect(table.standardOutput.contains("page-api@2026.11.30-2"))
        #expect(table.standardOutput.contains("Canary: no release raises a diagnostic its sibling does not."))
    }
}
