import Detector
import FlowmeterModels

/// `flowmeter check`'s formats for CI: SARIF 2.1.0 (GitHub code scanning and most CI systems read it), JUnit XML,
/// and GitHub Actions workflow annotations, each from the same ``CheckFinding`` list.
enum CheckCIFormat: String, CaseIterable, Sendable {
    case sarif
    case junit
    case github

    /// Renders `findings` of `payloads` (in order).
    func render(_ findings: [CheckFinding], payloads: [CheckPayload]) -> String {
        switch self {
        case .sarif: Self.sarif(findings)
        case .junit: Self.junit(findings, payloads: payloads)
        case .github: Self.github(findings)
        }
    }

    /// One run of tool `flowmeter` with its rules; each finding a result with `ruleId`, `level`, `message`, a
    /// physical location (the payload's file and line) and a logical one (the coding path); approved findings carry
    /// an external suppression with the approval's reason, so code scanning shows them as dismissed.
    static func sarif(_ findings: [CheckFinding]) -> String {
        let rules = CheckFinding.rules
        let results: [JSONValue] = findings.map { finding in
            var result: [(key: String, value: JSONValue)] = [
                ("ruleId", .string(finding.ruleID)),
                ("ruleIndex", .integer(Int64(rules.firstIndex { $0.id == finding.ruleID } ?? 0))),
                ("level", .string(finding.level.rawValue)),
                ("message", .object([("text", .string(finding.message))])),
                (
                    "locations",
                    .array([
                        .object([
                            (
                                "physicalLocation",
                                .object([
                                    ("artifactLocation", .object([("uri", .string(finding.uri))])),
                                    ("region", .object([("startLine", .integer(Int64(finding.line)))])),
                                ])
                            ),
                            (
                                "logicalLocations",
                                .array([.object([("fullyQualifiedName", .string(finding.codingPath))])])
                            ),
                        ])
                    ])
                ),
                (
                    "partialFingerprints",
                    .object([
                        (
                            "flowmeterFinding/v1",
                            .string(
                                [finding.ruleID, finding.widgetType, finding.appID ?? "", finding.key ?? ""]
                                    .joined(separator: "|"))
                        )
                    ])
                ),
            ]
            if let approval = finding.approval, !finding.approvalExpired {
                result.append(
                    (
                        "suppressions",
                        .array([
                            .object([
                                ("kind", .string("external")), ("status", .string("accepted")),
                                (
                                    "justification",
                                    .string("\(approval.reason) (\(approval.owner), until \(approval.expires))")
                                ),
                            ])
                        ])
                    ))
            }
            return .object(result)
        }
        let driver: JSONValue = .object([
            ("name", .string("flowmeter")), ("version", .string(flowmeterVersion)),
            ("semanticVersion", .string(flowmeterVersion)),
            (
                "rules",
                .array(
                    rules.map { rule in
                        .object([
                            ("id", .string(rule.id)), ("name", .string(rule.name)),
                            ("shortDescription", .object([("text", .string(rule.text))])),
                            ("fullDescription", .object([("text", .string(rule.text))])),
                            ("help", .object([("text", .string(rule.text))])),
                            (
                                "defaultConfiguration",
                                .object([("level", .string(rule.id == "noTraffic" ? "note" : "error"))])
                            ),
                        ])
                    })
            ),
        ])
        let document: JSONValue = .object([
            ("$schema", .string("https://json.schemastore.org/sarif-2.1.0.json")), ("version", .string("2.1.0")),
            (
                "runs",
                .array([
                    .object([
                        ("tool", .object([("driver", driver)])),
                        ("results", .array(results)),
                        ("columnKind", .string("unicodeCodePoints")),
                    ])
                ])
            ),
        ])
        return document.serialized(prettyPrinted: true)
    }

    /// `<testsuites>` with one `<testsuite>` per payload and one `<testcase>` per finding (a `<failure>` when it
    /// fails, `<skipped>` for what could not be judged); a payload without findings is one passing case.
    static func junit(_ findings: [CheckFinding], payloads: [CheckPayload]) -> String {
        let failures = findings.filter(\.fails).count
        var xml = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="flowmeter check" tests="\#(max(findings.count, payloads.count))" failures="\#(failures)">"#,
        ]
        for payload in payloads {
            let own = findings.filter { $0.payload == payload.name }
            let name = escape(payload.name)
            xml.append(
                #"  <testsuite name="\#(name)" tests="\#(max(1, own.count))" failures="\#(own.filter(\.fails).count)" "#
                    + #"skipped="\#(own.filter { $0.ruleID == "noTraffic" }.count)">"#)
            if own.isEmpty {
                xml.append(#"    <testcase classname="\#(name)" name="every widget renders"/>"#)
            }
            for finding in own {
                let caseName = escape(
                    "\(finding.ruleID) \(finding.widgetType)" + (finding.appID.map { " (\($0))" } ?? "")
                        + (finding.key.map { " \($0)" } ?? ""))
                let location = escape("\(finding.uri):\(finding.line) \(finding.codingPath)")
                xml.append(
                    #"    <testcase classname="\#(name)" name="\#(caseName)" file="\#(escape(finding.uri))" line="\#(finding.line)">"#
                )
                if finding.fails {
                    xml.append(
                        #"      <failure type="\#(finding.ruleID)" message="\#(escape(finding.message))">\#(location)</failure>"#
                    )
                } else if finding.ruleID == "noTraffic" {
                    xml.append(#"      <skipped message="\#(escape(finding.message))"/>"#)
                } else {
                    xml.append(
                        "      <system-out>\(escape(finding.level.rawValue + ": " + finding.message))</system-out>")
                }
                xml.append("    </testcase>")
            }
            xml.append("  </testsuite>")
        }
        xml.append("</testsuites>")
        return xml.joined(separator: "\n")
    }

    /// GitHub Actions workflow commands: `::error file=…,line=…,title=…::message` per finding (`warning` and `notice`
    /// for the others), at the payload's file and the line of the widget's JSON path.
    static func github(_ findings: [CheckFinding]) -> String {
        findings.map { finding in
            let command =
                switch finding.level {
                case .error: "error"
                case .warning: "warning"
                case .note: "notice"
                }
            return "::\(command) file=\(property(finding.uri)),line=\(finding.line),"
                + "title=\(property("flowmeter \(finding.ruleID): \(finding.widgetType)"))::"
                + data("\(finding.message) (\(finding.codingPath))")
        }.joined(separator: "\n")
    }

    /// A workflow command's message, escaped as the runner expects.
    private static func data(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    /// A workflow command's property value, escaped as the runner expects.
    private static func property(_ text: String) -> String {
        data(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }

    /// Text for an XML attribute or element: the report's escaping (entities, and control characters, which XML
    /// rejects, replaced).
    private static func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}
