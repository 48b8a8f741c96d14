import FlowmeterModels

extension ReportCharts {
    /// An incident's counts over time: one line per app version (events per bucket), the baseline as a dashed
    /// horizontal line, and each deploy as a labelled vertical marker.
    ///
    /// The elements carry stable classes for tests and styles: `chart-series` (with `data-version`),
    /// `chart-baseline`, `chart-deploy` (with `data-deploy`; `chart-deploy-suspect` for `suspect`) and `chart-onset`.
    static func incident(
        from: Timestamp, to: Timestamp, bucketSeconds: Int64, series: [(label: String, counts: [Int64: Int64])],
        baseline: Double, onset: Timestamp?, deploys: [(label: String, at: Timestamp)], suspect: String? = nil
    ) -> String {
        let width = 720.0
        let start = from.secondsSinceEpoch
        let span = Double(max(to.secondsSinceEpoch - start, 1))
        let (left, right, bottom) = (56.0, 16.0, 30.0)
        let plotWidth = width - left - right
        func x(_ seconds: Int64) -> Double { left + plotWidth * Double(seconds - start) / span }
        // Deploy labels in lanes above the plot, as the weekly report's timeline lays them out: none overlaps.
        let shown = deploys.filter { $0.at.secondsSinceEpoch >= start && $0.at < to }.sorted { $0.at < $1.at }
        let labels = layOut(shown.map { (label: $0.label, x: x($0.at.secondsSinceEpoch)) }, from: 0, to: width)
        let lanes = max(1, (labels.map(\.lane).max() ?? 0) + 1)
        let top = 14.0 + 14 * Double(lanes)
        let plotHeight = 200.0
        let legendRows = max(1, (series.count + 3) / 4)
        let height = top + plotHeight + bottom + 18 * Double(legendRows)
        let peak = series.flatMap(\.counts.values).max() ?? 0
        let maximum = niceCeiling(max(Double(peak), baseline * 1.2, 1))
        func y(_ value: Double) -> Double { top + plotHeight - plotHeight * min(value / maximum, 1) }
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(g(width)) \(g(height))\" width=\"100%\" "
            + "role=\"img\" aria-label=\"Events per \(bucketSeconds / 60) minutes by app version, with the baseline "
            + "and deploys\" class=\"chart incident-chart\" font-family=\"inherit\">"
        for step in 0...4 {
            let value = maximum * Double(step) / 4
            svg += "<line class=\"chart-grid\" x1=\"\(g(left))\" y1=\"\(g(y(value)))\" x2=\"\(g(left + plotWidth))\" "
            svg += "y2=\"\(g(y(value)))\"/>"
            svg += "<text class=\"chart-axis\" x=\"\(g(left - 6))\" y=\"\(g(y(value) + 4))\" text-anchor=\"end\" "
            svg += "font-size=\"11\">\(ReportFormatting.count(Int64(value.rounded())))</text>"
        }
        for tick in 0...4 {
            let at = start + Int64(span * Double(tick) / 4)
            let anchor = tick == 0 ? "start" : tick == 4 ? "end" : "middle"
            svg += "<text class=\"chart-axis\" x=\"\(g(x(at)))\" y=\"\(g(top + plotHeight + 16))\" "
            svg += "text-anchor=\"\(anchor)\" font-size=\"11\">\(shortTime(Timestamp(secondsSinceEpoch: at)))</text>"
        }
        for (index, entry) in series.enumerated() {
            let color = palette[index % palette.count]
            var points: [String] = []
            var bucket = start - start % bucketSeconds
            while bucket < to.secondsSinceEpoch {
                let value = Double(entry.counts[bucket] ?? 0)
                points.append("\(g(x(max(bucket, start) + bucketSeconds / 2))),\(g(y(value)))")
                bucket += bucketSeconds
            }
            svg += "<polyline class=\"chart-series\" data-version=\"\(HTMLEscaping.escape(entry.label))\" "
            svg += "fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\">"
            svg += "<title>\(HTMLEscaping.escape(entry.label))</title></polyline>"
            let legendX = left + Double(index % 4) * (plotWidth / 4)
            let legendY = top + plotHeight + bottom + 18 * Double(index / 4)
            svg += "<rect x=\"\(g(legendX))\" y=\"\(g(legendY - 9))\" width=\"12\" height=\"4\" fill=\"\(color)\"/>"
            svg += "<text class=\"chart-label\" x=\"\(g(legendX + 16))\" y=\"\(g(legendY - 4))\" font-size=\"11\">"
            svg += "\(HTMLEscaping.escape(entry.label))</text>"
        }
        let baselineY = y(baseline)
        svg += "<line id=\"incident-baseline\" class=\"chart-baseline\" x1=\"\(g(left))\" y1=\"\(g(baselineY))\" "
        svg += "x2=\"\(g(left + plotWidth))\" y2=\"\(g(baselineY))\" stroke-dasharray=\"6 4\" stroke-width=\"2\">"
        svg += "<title>baseline \(ReportFormatting.fixed(baseline, places: 1)) per bucket</title></line>"
        svg += "<text class=\"chart-label\" x=\"\(g(left + 4))\" y=\"\(g(baselineY - 4))\" font-size=\"11\">"
        svg += "baseline</text>"
        if let onset, onset.secondsSinceEpoch >= start, onset < to {
            let onsetX = x(onset.secondsSinceEpoch)
            svg += "<line class=\"chart-onset\" x1=\"\(g(onsetX))\" y1=\"\(g(top))\" x2=\"\(g(onsetX))\" "
            svg += "y2=\"\(g(top + plotHeight))\" stroke-width=\"1\" stroke-dasharray=\"2 3\"/>"
        }
        for label in labels {
            let isSuspect = label.label == suspect
            let labelY = 12 + 14 * Double(label.lane)
            svg += "<g class=\"chart-deploy\(isSuspect ? " chart-deploy-suspect" : "")\" "
            svg += "data-deploy=\"\(HTMLEscaping.escape(label.label))\">"
            svg +=
                "<line x1=\"\(g(label.x))\" y1=\"\(g(labelY + 3))\" x2=\"\(g(label.x))\" y2=\"\(g(top + plotHeight))\" "
            svg += "stroke-width=\"\(isSuspect ? 2.5 : 1.5)\"/>"
            svg += "<text class=\"chart-label\" x=\"\(g(label.textX))\" y=\"\(g(labelY))\" "
            svg += "text-anchor=\"\(label.anchor)\" font-size=\"11\"\(isSuspect ? " font-weight=\"700\"" : "")>"
            svg += "\(HTMLEscaping.escape(label.label))</text></g>"
        }
        return svg + "</svg>"
    }

    /// `HH:MM` of an instant, UTC.
    static func shortTime(_ instant: Timestamp) -> String {
        let text = instant.rfc3339String
        guard let tee = text.firstIndex(of: "T") else { return text }
        return String(text[text.index(after: tee)...].prefix(5))
    }

    private static func g(_ value: Double) -> String { ReportFormatting.fixed(value, places: 1) }
}
