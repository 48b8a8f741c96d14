import FlowmeterModels

extension ReportCharts {
    /// An incident's counts over time: one line per app version (events per bucket), the baseline as a dashed
    /// horizontal line, and each deploy as a labelled vertical marker.
    ///
    /// The elements carry stable classes for tests and styles: `chart-series` (with `data-version`),
    /// `chart-baseline`, `chart-deploy` (with `data-deploy`) and `chart-onset`.
    static func incident(
        from: Timestamp, to: Timestamp, bucketSeconds: Int64, series: [(label: String, counts: [Int64: Int64])],
        baseline: Double, onset: Timestamp?, deploys: [(label: String, at: Timestamp)]
    ) -> String {
        let width = 720.0
        let (left, right, top, bottom) = (56.0, 16.0, 28.0, 30.0)
        let plotWidth = width - left - right
        let plotHeight = 200.0
        let legendRows = max(1, (series.count + 3) / 4)
        let height = top + plotHeight + bottom + 18 * Double(legendRows)
        let start = from.secondsSinceEpoch
        let span = Double(max(to.secondsSinceEpoch - start, 1))
        func x(_ seconds: Int64) -> Double { left + plotWidth * Double(seconds - start) / span }
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
        for (index, deploy) in deploys.enumerated()
        where deploy.at.secondsSinceEpoch >= start && deploy.at < to {
            let deployX = x(deploy.at.secondsSinceEpoch)
            let anchor = deployX > left + plotWidth * 0.7 ? "end" : "start"
            let labelX = anchor == "end" ? deployX - 4 : deployX + 4
            svg += "<g class=\"chart-deploy\" data-deploy=\"\(HTMLEscaping.escape(deploy.label))\">"
            svg +=
                "<line x1=\"\(g(deployX))\" y1=\"\(g(top - 10))\" x2=\"\(g(deployX))\" y2=\"\(g(top + plotHeight))\" "
            svg += "stroke-width=\"2\"/>"
            svg += "<text class=\"chart-label\" x=\"\(g(labelX))\" y=\"\(g(top - 14 + Double(index % 2) * 12))\" "
            svg += "text-anchor=\"\(anchor)\" font-size=\"11\">\(HTMLEscaping.escape(deploy.label))</text></g>"
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
