import Detector
import FlowmeterCLI
import FlowmeterModels
import Foundation
import RollupStore
import TestSupport
import Testing

@Suite struct ReportFormatTests {
    static func report() throws -> WeeklyReport { try ReportModelTests.report() }

    @Test func jsonHasTheDocumentedShape() throws {
        let text = try Self.report().jsonString(prettyPrinted: true)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(
            Array(object.keys).sorted() == [
                "actions", "appID", "approvalsExpiring", "canary", "deploys", "duplicates", "from", "gates",
                "generatedAt", "incidents", "malformed", "manifests", "newTypes", "previousFrom", "spikes", "summary",
                "to", "ungated", "unknownByDay", "versions", "week",
            ])
        #expect(object["week"] as? String == "2026-W48")
        #expect(object["from"] as? String == "2026-11-23T00:00:00Z")
        #expect(object["appID"] is NSNull)
        let summary = try #require(object["summary"] as? [String: Any])
        let current = try #require(summary["current"] as? [String: Any])
        #expect(current["decodeCleanRate"] as? Double == 0.95)
        #expect((current["eventsByKind"] as? [String: Any])?["unknownType"] as? Int == 1305)
        let ungated = try #require(object["ungated"] as? [[String: Any]])
        // promo_banner_v2 was quiet for a week between its two bursts: back after more than 48 h, so regressed.
        #expect(ungated.first?["status"] as? String == "regressed")
        #expect(ungated.dropFirst().first?["status"] as? String == "new")
        let finding = try #require(ungated.dropFirst().first?["finding"] as? [String: Any])
        #expect((finding["suggestedGate"] as? [String: Any])?["minAppVersion"] as? String == "5.3.0")
        let actions = try #require(object["actions"] as? [[String: Any]])
        #expect(actions.first?["text"] as? String == "gate `hologram_projector` at 5.3.0")
        #expect(actions.first?["kind"] as? String == "gate")
        // Keys keep the documented order.
        #expect(text.range(of: "\"week\"")!.lowerBound < text.range(of: "\"summary\"")!.lowerBound)
        #expect(text.range(of: "\"summary\"")!.lowerBound < text.range(of: "\"actions\"")!.lowerBound)
    }

    @Test func markdownIsTablesAndListsWithoutHTML() throws {
        let markdown = try Self.report().markdown
        #expect(markdown.hasPrefix("# Schema health 2026-W48\n"))
        #expect(markdown.contains("1. gate `hologram_projector` at 5.3.0 (1,200 events)"))
        #expect(markdown.contains("2. fix typo `imgae_text_card` → `image_text_card` (50 events)"))
        #expect(markdown.contains("add missing key `imageURL` to `image_text_card` payloads"))
        #expect(markdown.contains("| Metric | This week | Last week | Change |"))
        #expect(markdown.contains("| Decode-clean rate | 95.00% | 95.67% | −0.7 pp |"))
        // No raw HTML: every < from the data is inside a code span or escaped.
        for line in markdown.split(separator: "\n") where line.contains("<") {
            let outsideCode = Self.outsideCodeSpans(String(line))
            #expect(!outsideCode.contains("<") || outsideCode.contains("\\<"), "raw < in: \(line)")
        }
        // Every table row has as many cells as its header: a pipe from the data cannot add a column.
        var columns: Int?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("|") else {
                columns = nil
                continue
            }
            let cells = line.replacingOccurrences(of: "\\|", with: "").split(
                separator: "|", omittingEmptySubsequences: false
            ).count
            if let columns { #expect(cells == columns, "row \(line)") } else { columns = cells }
        }
        #expect(markdown.contains("``"))  // the hostile message holds backticks: fenced by a longer run
    }

    /// The text of `line` outside CommonMark code spans (a run of n backticks up to the next run of exactly n).
    static func outsideCodeSpans(_ line: String) -> String {
        let characters = Array(line)
        var output = ""
        var index = 0
        func run(at start: Int) -> Int {
            var end = start
            while end < characters.count && characters[end] == "`" { end += 1 }
            return end - start
        }
        while index < characters.count {
            guard characters[index] == "`" else {
                output.append(characters[index])
                index += 1
                continue
            }
            let length = run(at: index)
            var search = index + length
            var closed: Int?
            while search < characters.count {
                if characters[search] == "`" {
                    let other = run(at: search)
                    if other == length {
                        closed = search + other
                        break
                    }
                    search += other
                } else {
                    search += 1
                }
            }
            guard let closed else {
                output += String(repeating: "`", count: length)
                index += length
                continue
            }
            index = closed
        }
        return output
    }

    @Test func htmlIsSelfContainedWithoutScripts() throws {
        let html = try Self.report().html
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http://"))
        #expect(!html.contains("https://"))
        #expect(!html.contains("@import") && !html.contains("url("))
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;"))
        #expect(html.contains("@media print"))
        #expect(html.contains("<svg") && html.contains("</svg>"))
        #expect(html.contains("gate <code>hologram_projector</code> at <strong>5.3.0</strong>"))
    }

    @Test func htmlTagsBalance() throws {
        let html = try Self.report().html
        let voids: Set<String> = ["meta", "br", "line", "rect", "circle", "path", "!doctype"]
        var stack: [String] = []
        var index = html.startIndex
        var inStyle = false
        while let open = html[index...].firstIndex(of: "<") {
            guard let close = html[open...].firstIndex(of: ">") else {
                Issue.record("unclosed tag at \(html.distance(from: html.startIndex, to: open))")
                return
            }
            let tag = html[html.index(after: open)..<close]
            index = html.index(after: close)
            let selfClosing = tag.hasSuffix("/")
            let name = tag.drop { $0 == "/" }.prefix { !$0.isWhitespace && $0 != "/" }.lowercased()
            if inStyle && name != "style" { continue }
            if voids.contains(name) || selfClosing { continue }
            if tag.hasPrefix("/") {
                #expect(stack.last == name, "</\(name)> closes <\(stack.last ?? "nothing")>")
                if stack.last == name { stack.removeLast() }
                if name == "style" { inStyle = false }
            } else {
                stack.append(name)
                if name == "style" { inStyle = true }
            }
        }
        #expect(stack.isEmpty, "unclosed: \(stack)")
    }

    @Test func emptyStoreStillRendersEveryFormat() throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-report-empty")
        let store = try openRollupStore(url: directory.file("empty.sqlite"))
        let report = try WeeklyReportBuilder().report(
            reader: store, week: ISOWeek(year: 2026, week: 48)!, now: ReportModelTests.now)
        #expect(report.actions.isEmpty)
        #expect(report.markdown.contains("Nothing to do this week."))
        #expect(report.html.contains("Nothing to do this week."))
        #expect(report.jsonString().contains("\"decodeCleanRate\":null"))
    }
}
