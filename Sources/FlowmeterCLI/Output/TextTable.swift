/// An aligned plain-text table that fits a terminal width by truncating its flexible columns with `…`.
///
/// Numbers align right, text left, two spaces between columns. The header is bold when colour is on; colour never
/// changes the widths, since the styles wrap whole cells after padding. Cells are app-sent text: each is shown
/// escaped (``Terminal/printable(_:)``) and measured in terminal columns, so wide characters keep the columns aligned.
struct TextTable {
    /// One column: its title, alignment, and whether it gives up width when the table is too wide.
    struct Column {
        var title: String
        var alignsRight = false
        /// Flexible columns (long type names, lists) shrink until the table fits: by priority, then widest first.
        var isFlexible = false
        /// A flexible column never shrinks below this.
        var minimumWidth = 8
        /// Flexible columns with a higher priority shrink first (to their minimum) before the next ones give way;
        /// the column a reader scans for (the widget type) has the lowest.
        var shrinkPriority = 0

        static func text(_ title: String, flexible: Bool = false, shrinkPriority: Int = 0) -> Column {
            Column(title: title, alignsRight: false, isFlexible: flexible, shrinkPriority: shrinkPriority)
        }

        static func number(_ title: String) -> Column {
            Column(title: title, alignsRight: true)
        }
    }

    /// The columns.
    var columns: [Column]
    /// The rows, one cell per column.
    var rows: [[String]] = []
    /// The widest the table may be.
    var width = 80

    /// Appends a row; it must have one cell per column.
    mutating func append(_ row: [String]) {
        precondition(row.count == columns.count, "a row needs one cell per column")
        rows.append(row)
    }

    /// Removes the column titled `title` when every row holds the same value in it, returning that value (a
    /// one-app report needs no APP column; the caller names the app once instead).
    mutating func removeColumnIfUniform(_ title: String) -> String? {
        guard let index = columns.firstIndex(where: { $0.title == title }), let first = rows.first?[index],
            rows.allSatisfy({ $0[index] == first })
        else { return nil }
        columns.remove(at: index)
        for row in rows.indices { rows[row].remove(at: index) }
        return first
    }

    /// The table split by the values of the column titled `title` (in order of first appearance): each value as a
    /// heading line, then its rows without that column, so a long app id is printed once instead of being cut in
    /// every row. The same as `rendered` when the column does not exist.
    func renderedGrouped(by title: String, style: (String) -> String = { $0 }) -> String {
        guard let index = columns.firstIndex(where: { $0.title == title }) else { return rendered(style: style) }
        var order: [String] = []
        var groups: [String: [[String]]] = [:]
        for row in rows {
            if groups[row[index]] == nil { order.append(row[index]) }
            var rest = row
            rest.remove(at: index)
            groups[row[index], default: []].append(rest)
        }
        var remaining = columns
        remaining.remove(at: index)
        return order.map { value in
            var group = TextTable(columns: remaining)
            group.width = width
            group.rows = groups[value] ?? []
            return style(Terminal.truncated(value, toColumns: width)) + "\n" + group.rendered(style: style)
        }.joined(separator: "\n\n")
    }

    /// The table's lines, header first, each at most `width` columns.
    func rendered(style: (String) -> String = { $0 }) -> String {
        let titles = columns.map { Terminal.printable($0.title) }
        let cells = rows.map { $0.map(Terminal.printable) }
        var widths = columns.indices.map { column in
            max(Terminal.columns(titles[column]), cells.map { Terminal.columns($0[column]) }.max() ?? 0)
        }
        let gaps = 2 * (columns.count - 1)
        while widths.reduce(0, +) + gaps > width {
            let candidates = columns.indices.filter { columns[$0].isFlexible && widths[$0] > columns[$0].minimumWidth }
            let first = candidates.max {
                columns[$0].shrinkPriority != columns[$1].shrinkPriority
                    ? columns[$0].shrinkPriority < columns[$1].shrinkPriority : widths[$0] < widths[$1]
            }
            guard let widest = first else { break }
            widths[widest] -= 1
        }
        var lines = [line(titles, widths: widths, style: style)]
        lines += cells.map { line($0, widths: widths, style: { $0 }) }
        return lines.joined(separator: "\n")
    }

    private func line(_ cells: [String], widths: [Int], style: (String) -> String) -> String {
        var parts: [String] = []
        for (index, cell) in cells.enumerated() {
            let text = Terminal.truncated(cell, toColumns: widths[index])
            let isLast = index == cells.count - 1
            let alignsRight = columns[index].alignsRight
            parts.append(
                style(
                    isLast && !alignsRight
                        ? text : Terminal.padded(text, toColumns: widths[index], alignsRight: alignsRight)))
        }
        return parts.joined(separator: "  ")
    }
}
