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

    /// A bar per day, stacked by type, with a legend below it; `labels` name the series, `days` label the bars.
    ///
    /// The legend flows in rows under the plot with every name whole (long type and app names are the point of the
    /// chart), the chart growing a row when one is full.
    static func stackedDays(days: [String], series: [(label: String, events: [Int64], isOther: Bool)]) -> String {
        let width = 720.0
        let (left, right, top, bottom) = (56.0, 16.0, 16.0, 36.0)
        let plotWidth = width - left - right
        let plotHeight = 220.0
        // The legend's rows: items of swatch, gap and name, placed left to right.
        var legend: [(x: Double, row: Int)] = []
        var (cursor, row) = (left, 0)
        for entry in series {
            let itemWidth = 18 + textWidth(entry.label, size: 11) + 18
            if cursor + itemWidth > width - right && cursor > left {
                row += 1
                cursor = left
            }
            legend.append((cursor, row))
            cursor += itemWidth
        }
        let legendTop = top + plotHeight + bottom + 6
        let height = legendTop + 22 * Double(series.isEmpty ? 0 : row + 1)
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
        for (index, entry) in series.enumerated() {
            let (x, row) = legend[index]
            let y = legendTop + 22 * Double(row)
            let color = entry.isOther ? otherColor : palette[index % palette.count]
            svg += "<rect x=\"\(f(x))\" y=\"\(f(y - 9))\" width=\"12\" height=\"12\" rx=\"2\" fill=\"\(color)\"/>"
            svg += text(x + 18, y + 1, entry.label, anchor: "start", size: 11, color: ink)
        }
        return svg + "</svg>"
    }

    /// Horizontal bars with a label on the left and a value on the right; `values` are shares in `0...1`.
    ///
    /// Labels are whole: the left margin grows to the longest one (estimated from its length), so a version such
    /// as `com.example.reader 3.5.0` is never cut.
    static func bars(
        title: String, rows: [(label: String, share: Double?, caption: String, color: String)]
    ) -> String {
        let rowHeight = 24.0
        let longest = rows.map { textWidth($0.label, size: 12) }.max() ?? 0
        let (left, right, top) = (max(60, longest + 16), 70.0, 8.0)
        let plotWidth = 250.0
        let width = left + plotWidth + right
        let height = top * 2 + rowHeight * Double(max(rows.count, 1))
        var svg = open(width: width, height: height, title: title)
        for (index, row) in rows.enumerated() {
            let y = top + rowHeight * Double(index)
            svg += text(left - 8, y + 16, row.label, anchor: "end", size: 12, color: ink)
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

    /// The colour of a rate by how good it is: red at or below `bad`, amber at `fair`, green at or above `good`,
    /// blended in between, so 92% reads nearly amber and 26% red rather than both the same red.
    static func goodness(_ rate: Double?, bad: Double = 0.5, fair: Double = 0.9, good: Double = 0.99) -> String {
        guard let rate else { return otherColor }
        let red = (0xd0, 0x3b, 0x2f)
        let amber = (0xef, 0xb1, 0x18)
        let green = (0x3c, 0xa9, 0x51)
        func blend(_ a: (Int, Int, Int), _ b: (Int, Int, Int), _ t: Double) -> String {
            let t = min(max(t, 0), 1)
            let mix = { (x: Int, y: Int) in Int((Double(x) + (Double(y) - Double(x)) * t).rounded()) }
            let channels = [mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2)]
            return "#" + channels.map { String(format: "%02x", $0) }.joined()
        }
        if rate <= fair { return blend(red, amber, (rate - bad) / (fair - bad)) }
        return blend(amber, green, (rate - fair) / (good - fair))
    }

    /// The week as a line from Monday to Monday, deploys as labelled ticks above it and incidents as labelled
    /// triangles below.
    ///
    /// Labels never overlap: each goes in the first lane (row) where it clears the labels already there, to the
    /// right of its tick or, near the right edge, to the left; the chart grows a lane when none has room. Several
    /// deploys finishing minutes apart stack instead of printing over each other.
    static func timeline(
        from: Timestamp, to: Timestamp, deploys: [(label: String, at: Timestamp)],
        spikes: [(label: String, at: Timestamp, attributed: Bool)]
    ) -> String {
        let width = 720.0
        let (left, right) = (20.0, 20.0)
        let laneHeight = 16.0
        let plotWidth = width - left - right
        let span = Double(max(to.secondsSinceEpoch - from.secondsSinceEpoch, 1))
        func x(_ instant: Timestamp) -> Double {
            left + plotWidth * Double(instant.secondsSinceEpoch - from.secondsSinceEpoch) / span
        }
        let deployLabels = layOut(
            deploys.sorted { $0.at < $1.at }.map { (label: $0.label, x: x($0.at)) }, from: left, to: width - right)
        let spikeLabels = layOut(
            spikes.sorted { $0.at < $1.at }.map { (label: $0.label, x: x($0.at)) }, from: left, to: width - right)
        let deployLanes = max(1, (deployLabels.map(\.lane).max() ?? 0) + 1)
        let spikeLanes = spikeLabels.isEmpty ? 0 : (spikeLabels.map(\.lane).max() ?? 0) + 1
        let top = 18.0 + laneHeight * Double(deployLanes)
        let spikeTop = top + 44
        let height = spikeTop + laneHeight * Double(spikeLanes) + 12
        var svg = open(width: width, height: height, title: "Deploys and incidents over the week")
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
        for label in deployLabels {
            let labelY = 14 + laneHeight * Double(label.lane)
            svg += line(label.x, labelY + 3, label.x, top, stroke: "#4269d0", dash: true)
            svg += "<circle cx=\"\(f(label.x))\" cy=\"\(f(top))\" r=\"4\" fill=\"#4269d0\"/>"
            svg += text(label.textX, labelY, label.label, anchor: label.anchor, size: 11, color: ink)
        }
        let attributed = Dictionary(spikes.map { ($0.label, $0.attributed) }, uniquingKeysWith: { $0 || $1 })
        for label in spikeLabels {
            let color = attributed[label.label] == true ? "#d03b2f" : "#efb118"
            let labelY = spikeTop + 12 + laneHeight * Double(label.lane)
            svg += line(label.x, top + 42, label.x, labelY - 9, stroke: color, dash: true)
            svg += "<path d=\"M\(f(label.x)) \(f(top + 30)) l-6 10 h12 z\" fill=\"\(color)\">"
            svg += "<title>\(HTMLEscaping.escape(label.label))</title></path>"
            svg += text(label.textX, labelY, label.label, anchor: label.anchor, size: 11, color: ink)
        }
        return svg + "</svg>"
    }

    /// A label placed by ``layOut(_:from:to:)``.
    struct PlacedLabel {
        var label: String
        var x: Double
        var lane: Int
        var anchor: String
        var textX: Double
    }

    /// Puts each label (in order) in the first lane where it clears the others by a few pixels: to the right of
    /// its `x`, or to the left when the right would leave [`from`, `to`]. Labels are whole, never cut.
    static func layOut(_ labels: [(label: String, x: Double)], from: Double, to: Double) -> [PlacedLabel] {
        var lanes: [[ClosedRange<Double>]] = []
        var placed: [PlacedLabel] = []
        for entry in labels {
            let width = textWidth(entry.label, size: 11)
            let startsRight = entry.x + 4 + width <= to || entry.x - 4 - width < from
            let extent =
                startsRight ? (entry.x - 2)...(entry.x + 4 + width) : (entry.x - 4 - width)...(entry.x + 2)
            let padded = (extent.lowerBound - 6)...(extent.upperBound + 6)
            var lane = lanes.firstIndex { occupied in !occupied.contains { $0.overlaps(padded) } }
            if lane == nil {
                lanes.append([])
                lane = lanes.count - 1
            }
            lanes[lane!].append(extent)
            placed.append(
                PlacedLabel(
                    label: entry.label, x: entry.x, lane: lane!, anchor: startsRight ? "start" : "end",
                    textX: startsRight ? entry.x + 4 : entry.x - 4))
        }
        return placed
    }

    /// About how wide `text` sets at `size` px in the report's sans-serif: 0.58 em per character, a little over the
    /// average so estimates err towards room.
    static func textWidth(_ text: String, size: Double) -> Double {
        Double(text.count) * size * 0.58
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
