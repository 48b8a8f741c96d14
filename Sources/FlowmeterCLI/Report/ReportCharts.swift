import FlowmeterModels

/// The report's inline SVG charts: plain shapes and text, no scripts, labels escaped, sized by `viewBox` so they
/// scale to the page on screen and in print.
enum ReportCharts {
    /// Colour-blind-safe series colours (Observable 10); the last is for "other".
    static let palette = ["#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5"]
    static let otherColor = "#9498a0"
    static let ink = "#1f2328"
    static let muted = "#57606a"
    static let grid = "#d8dee4"

    /// A bar per day, stacked by type, with a legend; `labels` name the series, `days` label the bars.
    static func stackedDays(days: [String], series: [(label: String, events: [Int64], isOther: Bool)]) -> String {
        let width = 720.0
        let height = 260.0
        let (left, right, top, bottom) = (56.0, 200.0, 16.0, 36.0)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let totals = days.indices.map { day in series.map { $0.events[day] }.reduce(0, +) }
        let maximum = niceCeiling(Double(totals.max() ?? 0))
        var svg = open(width: width, height: height, title: "Daily unknownType events by type")
        for tick in 0...4 {
            let value = maximum * Double(tick) / 4
            let y = top + plotHeight - plotHeight * Double(tick) / 4
            svg += line(left, y, left + plotWidth, y, stroke: grid)
            svg += text(left - 8, y + 4, ReportFormatting.count(Int64(value)), anchor: "end", size: 11, color: muted)
        }
        let slot = plotWidth / Double(max(days.count, 1))
        let barWidth = slot * 0.62
        for (day, label) in days.enumerated() {
            let x = left + slot * Double(day) + (slot - barWidth) / 2
            var y = top + plotHeight
            for (index, entry) in series.enumerated() where entry.events[day] > 0 {
                let barHeight = maximum > 0 ? plotHeight * Double(entry.events[day]) / maximum : 0
                y -= barHeight
                let color = entry.isOther ? otherColor : palette[index % palette.count]
                svg += "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(barWidth))\" height=\"\(f(barHeight))\" "
                svg += "fill=\"\(color)\"><title>\(HTMLEscaping.escape(entry.label)): "
                svg += "\(ReportFormatting.count(entry.events[day]))</title></rect>"
            }
            if totals[day] > 0 {
                svg += text(
                    x + barWidth / 2, y - 4, ReportFormatting.count(totals[day]), anchor: "middle", size: 10,
                    color: muted)
            }
            svg += text(x + barWidth / 2, top + plotHeight + 18, label, anchor: "middle", size: 11, color: muted)
        }
        svg += line(left, top + plotHeight, left + plotWidth, top + plotHeight, stroke: muted)
        let legendX = left + plotWidth + 20
        for (index, entry) in series.enumerated() {
            let y = top + 8 + Double(index) * 22
            let color = entry.isOther ? otherColor : palette[index % palette.count]
            svg += "<rect x=\"\(f(legendX))\" y=\"\(f(y - 9))\" width=\"12\" height=\"12\" rx=\"2\" fill=\"\(color)\"/>"
            svg += text(
                legendX + 18, y + 1, ReportFormatting.truncated(entry.label, to: 24), anchor: "start", size: 11,
                color: ink, title: entry.label)
        }
        return svg + "</svg>"
    }

    /// Horizontal bars with a label on the left and a value on the right; `values` are shares in `0...1`.
    static func bars(
        title: String, rows: [(label: String, share: Double?, caption: String, color: String)]
    ) -> String {
        let width = 420.0
        let rowHeight = 24.0
        let (left, right, top) = (110.0, 70.0, 8.0)
        let height = top * 2 + rowHeight * Double(max(rows.count, 1))
        let plotWidth = width - left - right
        var svg = open(width: width, height: height, title: title)
        for (index, row) in rows.enumerated() {
            let y = top + rowHeight * Double(index)
            svg += text(
                left - 8, y + 16, ReportFormatting.truncated(row.label, to: 20), anchor: "end", size: 12,
                color: ink, title: row.label)
            svg += "<rect x=\"\(f(left))\" y=\"\(f(y + 5))\" width=\"\(f(plotWidth))\" height=\"14\" fill=\"#eef1f4\"/>"
            if let share = row.share {
                let barWidth = plotWidth * min(max(share, 0), 1)
                svg += "<rect x=\"\(f(left))\" y=\"\(f(y + 5))\" width=\"\(f(barWidth))\" height=\"14\" "
                svg += "fill=\"\(row.color)\"/>"
            }
            svg += text(left + plotWidth + 8, y + 16, row.caption, anchor: "start", size: 12, color: ink)
        }
        return svg + "</svg>"
    }

    /// The week as a line from Monday to Monday, deploys as labelled ticks above it and spikes as dots below.
    static func timeline(
        from: Timestamp, to: Timestamp, deploys: [(label: String, at: Timestamp)],
        spikes: [(label: String, at: Timestamp, attributed: Bool)]
    ) -> String {
        let width = 720.0
        let (left, right) = (20.0, 20.0)
        let laneCount = 4
        let top = 18.0 + 16.0 * Double(laneCount)
        let height = top + 64
        let plotWidth = width - left - right
        let span = Double(max(to.secondsSinceEpoch - from.secondsSinceEpoch, 1))
        func x(_ instant: Timestamp) -> Double {
            left + plotWidth * Double(instant.secondsSinceEpoch - from.secondsSinceEpoch) / span
        }
        var svg = open(width: width, height: height, title: "Deploys and spikes over the week")
        for day in 0...7 {
            let instant = Timestamp(secondsSinceEpoch: from.secondsSinceEpoch + Int64(day) * 86_400)
            let dayX = x(instant)
            svg += line(dayX, top - 4, dayX, top + 4, stroke: muted)
            if day < 7 {
                svg += text(
                    dayX + plotWidth / 14, top + 22, ReportFormatting.shortDay(instant), anchor: "middle",
                    size: 11, color: muted)
            }
        }
        svg += line(left, top, left + plotWidth, top, stroke: muted)
        for (index, deploy) in deploys.enumerated() {
            let deployX = x(deploy.at)
            let labelY = 14 + 16 * Double(index % laneCount)
            svg += line(deployX, labelY + 3, deployX, top, stroke: "#4269d0", dash: true)
            svg += "<circle cx=\"\(f(deployX))\" cy=\"\(f(top))\" r=\"4\" fill=\"#4269d0\"/>"
            let anchor = deployX > left + plotWidth * 0.75 ? "end" : "start"
            svg += text(
                deployX + (anchor == "end" ? -4 : 4), labelY, ReportFormatting.truncated(deploy.label, to: 32),
                anchor: anchor, size: 11, color: ink, title: deploy.label)
        }
        for spike in spikes {
            let spikeX = x(spike.at)
            let color = spike.attributed ? "#d03b2f" : "#efb118"
            svg += "<path d=\"M\(f(spikeX)) \(f(top + 32)) l-6 10 h12 z\" fill=\"\(color)\">"
            svg += "<title>\(HTMLEscaping.escape(spike.label))</title></path>"
        }
        return svg + "</svg>"
    }

    private static func open(width: Double, height: Double, title: String) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(f(width)) \(f(height))\" width=\"100%\" "
            + "role=\"img\" aria-label=\"\(HTMLEscaping.escape(title))\" "
            + "font-family=\"-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif\">"
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, dash: Bool = false)
        -> String
    {
        "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\" stroke-width=\"1\""
            + (dash ? " stroke-dasharray=\"3 3\"" : "") + "/>"
    }

    private static func text(
        _ x: Double, _ y: Double, _ content: String, anchor: String, size: Int, color: String, title: String? = nil
    ) -> String {
        var svg = "<text x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\" font-size=\"\(size)\" fill=\"\(color)\">"
        if let title, title != content { svg += "<title>\(HTMLEscaping.escape(title))</title>" }
        return svg + HTMLEscaping.escape(content) + "</text>"
    }

    /// A round number at or above `value` for an axis maximum (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of
    /// ten), so the tallest bar fills most of the plot.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        for step in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] where step * magnitude >= value {
            return step * magnitude
        }
        return 10 * magnitude
    }

    private static func f(_ value: Double) -> String { ReportFormatting.fixed(value, places: 1) }
}
