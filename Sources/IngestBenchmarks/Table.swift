import Foundation

/// A table of text cells rendered two ways: aligned columns for the terminal, a pipe table for Markdown.
public struct Table: Sendable {
    /// Column headings.
    public var headings: [String]
    /// Rows of cells, each as many as `headings`.
    public var rows: [[String]]
    /// Columns whose cells are right-aligned in the terminal (numbers).
    public var rightAligned: Set<Int>

    /// A table with `headings`, no rows yet.
    public init(headings: [String], rightAligned: Set<Int> = []) {
        self.headings = headings
        self.rows = []
        self.rightAligned = rightAligned
    }

    /// Aligned lines, two spaces between columns.
    public var text: [String] {
        let widths = headings.indices.map { column in
            ([headings] + rows).map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        return ([headings] + rows).map { cells in
            cells.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: max(0, widths[column] - cell.count))
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }
            .joined(separator: "  ")
            .replacingOccurrences(of: " +$", with: "", options: .regularExpression)
        }
    }

    /// A GitHub-flavoured Markdown pipe table.
    public var markdown: [String] {
        let line = { (cells: [String]) in "| " + cells.joined(separator: " | ") + " |" }
        let rule = headings.indices.map { rightAligned.contains($0) ? "---:" : "---" }
        return [line(headings), line(rule)] + rows.map(line)
    }
}
