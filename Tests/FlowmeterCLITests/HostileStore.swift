import FlowmeterModels
import Foundation
import RollupStore
import Rollups
import TestSupport

/// Strings an attacker holding an ingest key can send, and a store that holds them where every reader looks.
///
/// The store is written through `apply` as a sink would, in SeededStore's window (2026-11-30 06:00–10:00 UTC):
/// app `com.example.shop` versions 5.2.1 and 5.3.0, each widget type of `widgetTypes` reported as unknownType by 5.2.1
/// from 30 installs (an ungated type), and `malformedPayload` of `spikeType` spiking at 09:30 with hostile samples.
/// Identifiers holding control characters are there too, as an older version or a hand edit could have left them
/// (ingest refuses them now); readers read them as stored, and every writer escapes them.
final class HostileStore: Sendable {
    /// Clears the screen, turns text red and sets the window title: what must never reach a terminal raw.
    static let escapes = "esc\u{1B}[2J\u{1B}[31mred\u{1B}]0;pwned\u{7}\u{9B}1m"
    /// A line break that would forge a log line or a table row.
    static let lineBreaks = "line1\nforged: row\r\n\u{2028}next"
    /// Right-to-left override: the rest of the line would read backwards.
    static let bidi = "abc\u{202E}fed\u{202C}\u{2066}x\u{2069}"
    /// HTML, Markdown table and code-span breakers; a legal identifier.
    static let markup = "<script>alert(1)</script>|`tick`&amp;*_[x](y)"
    /// A spreadsheet formula; a legal identifier.
    static let formula = "=HYPERLINK(\"http://evil.example\",\"x\")"
    /// Other formula starts.
    static let formulas = ["+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]
    /// Wide and combining characters, which a table must measure in columns.
    static let wide = "日本語タイプ🧨cafe\u{301}"
    /// A 70,000-character string: over every length cap.
    static let long = String(repeating: "long", count: 17_500)

    /// The widget types the store holds, each reported unknown.
    static let widgetTypes = [markup, formula, wide, escapes, lineBreaks, bidi, long] + formulas
    /// The spiking malformed type.
    static let spikeType = "spike" + markup
    /// A kind newer clients might send: an open set, so any non-empty string.
    static let customKind = "@kind<b>|x"

    let directory: TemporaryDirectory
    let path: String
    /// A page payload for `check` whose widgets use the hostile types.
    let payloadPath: String

    init() throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-hostile-store")
        path = directory.file("hostile.sqlite")
        payloadPath = directory.file("page\u{1B}[31m.json")
        let store = try openRollupStore(url: path)
        let shop = "com.example.shop"
        var rollups: [PartialRollup.Rollup] = []
        for minute in stride(from: Int64(0), to: 240, by: 10) {
            rollups.append(.version(SeededStore.traffic(shop, "5.2.1", minute: minute, installs: 40, types: [])))
            rollups.append(.version(SeededStore.traffic(shop, "5.3.0", minute: minute, installs: 50, types: [])))
            rollups.append(
                .version(
                    SeededStore.traffic(
                        "com.evil" + Self.escapes, "6.6.6" + Self.bidi, minute: minute,
                        installs: 10, types: [Self.markup])))
        }
        for type in Self.widgetTypes {
            for minute in stride(from: Int64(120), to: 240, by: 12) {
                rollups.append(
                    .series(
                        SeededStore.events(
                            shop, "5.2.1", .unknownType, type, minute: minute, events: 5, installs: 30,
                            release: "page-api@" + Self.escapes)))
            }
        }
        let samples = [
            RollupSample(codingPath: Self.formula, message: Self.lineBreaks + Self.escapes, pageID: Self.markup),
            RollupSample(codingPath: "page.\n\u{1B}[2J", message: Self.markup + Self.bidi, pageID: nil),
            RollupSample(codingPath: Self.long, message: Self.long, pageID: Self.long),
        ]
        for minute in stride(from: Int64(0), to: 210, by: 5) {
            rollups.append(
                .series(SeededStore.events(shop, "5.3.0", .malformedPayload, Self.spikeType, minute: minute, events: 2))
            )
        }
        var spike = SeededStore.events(
            shop, "5.3.0", .malformedPayload, Self.spikeType, minute: 210, events: 300, installs: 40,
            release: "page-api@" + Self.markup)
        spike.samples = samples
        rollups.append(.series(spike))
        let duplicate = SeededStore.events(shop, "5.3.0", .duplicateID, Self.markup, minute: 30, events: 5)
        var withSamples = duplicate
        withSamples.samples = samples
        rollups.append(.series(withSamples))
        rollups.append(
            .series(
                SeededStore.events(
                    shop, "5.3.0", DiagnosticKind(rawValue: Self.customKind)!, Self.formula, minute: 60, events: 9)))
        let partials = rollups.enumerated().map { index, rollup in
            PartialRollup(id: "hostile/\(index)", collector: "test", rollup: rollup)
        }
        _ = try store.apply(partials)
        try store.recordDeploy(
            DeployMarker(
                id: "deploy-1", service: "page-api", version: Self.markup,
                finishedAt: Timestamp(rfc3339: "2026-11-30T09:20:00Z")!, commit: Self.formula, url: Self.escapes))
        try store.recordDeploy(
            DeployMarker(
                id: "deploy-2", service: Self.formula, version: Self.bidi + Self.wide,
                finishedAt: Timestamp(rfc3339: "2026-11-30T08:00:00Z")!))
        // Breaks the identifier rule, which ingest applies; readers read it as stored.
        try store.recordDeploy(
            DeployMarker(
                id: "deploy-3", service: "page-api", version: Self.escapes + Self.lineBreaks,
                finishedAt: Timestamp(rfc3339: "2026-11-30T07:00:00Z")!))
        let widgets = Self.widgetTypes.map { #"{"type": "\#(Self.jsonEscaped($0))"}"# }.joined(separator: ",")
        try Data(#"{"page": {"id": "home", "sections": [{"widgets": [\#(widgets)]}]}}"#.utf8)
            .write(to: URL(fileURLWithPath: payloadPath))
    }

    /// The window's options for a query.
    var window: [String] { ["--from", SeededStore.from, "--to", SeededStore.to, "--store", path] }

    /// `text` as the inside of a JSON string literal.
    static func jsonEscaped(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            default:
                if scalar.value < 0x20 {
                    output += String(format: "\\u%04x", scalar.value)
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }
}
