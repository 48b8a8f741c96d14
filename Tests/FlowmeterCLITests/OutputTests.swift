import Testing

@testable import FlowmeterCLI

@Suite struct OutputTests {
    @Test func hostileTypeNamesCannotReachTheTerminalAsEscapes() {
        var table = TextTable(columns: [.text("TYPE")])
        table.append(["ok\u{1B}[2Jx\u{7}"])
        table.append(["hologram_projector"])
        #expect(table.rendered() == "TYPE\nok\\u{1B}[2Jx\\u{7}\nhologram_projector")
    }

    @Test func csvQuotesPerRFC4180() {
        var csv = CSVTable(header: ["a", "b"])
        csv.rows.append(["plain", "has,comma"])
        csv.rows.append(["say \"hi\"", "two\nlines"])
        #expect(csv.rendered() == "a,b\r\nplain,\"has,comma\"\r\n\"say \"\"hi\"\"\",\"two\nlines\"\r\n")
    }

    @Test func tableFitsEightyColumnsAndTruncatesFlexibleColumns() {
        var table = TextTable(columns: [
            .text("TYPE", flexible: true), .number("EVENTS"), .text("NOTE", flexible: true),
        ])
        table.append([String(repeating: "very_long_widget_type_", count: 6), "12345", "short"])
        table.append(["ok", "1", String(repeating: "x", count: 70)])
        let lines = table.rendered().split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines[1].contains("…"))
        #expect(lines[1].contains("12345"))
    }

    @Test func narrowTableIsNotPadded() {
        var table = TextTable(columns: [.text("A"), .number("N")])
        table.append(["x", "10"])
        #expect(table.rendered() == "A   N\nx  10")
    }

    @Test(arguments: [
        ("90m", Int64(5400)), ("24h", 86_400), ("7d", 604_800), ("30s", 30), ("2w", 1_209_600),
    ])
    func durationsParse(text: String, seconds: Int64) {
        #expect(OptionValues.wholeSeconds(text) == seconds)
    }

    @Test(arguments: ["", "5", "0h", "-1h", "1.5h", "h", "5x"])
    func badDurationsDoNotParse(text: String) {
        #expect(OptionValues.wholeSeconds(text) == nil)
    }

    @Test func trendsRead() {
        #expect(CellFormat.trend(current: 10, previous: 0) == "new")
        #expect(CellFormat.trend(current: 0, previous: 5) == "gone")
        #expect(CellFormat.trend(current: 15, previous: 10) == "+50%")
        #expect(CellFormat.trend(current: 5, previous: 10) == "-50%")
        #expect(CellFormat.trend(current: 10, previous: 10) == "=")
    }
}
