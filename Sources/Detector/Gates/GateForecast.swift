public import FlowmeterModels
import Foundation

/// When the share of installs below a gate's version is forecast to fall under a threshold, fitted to daily shares.
///
/// The fit: the log-odds of the below share, `log(s / (1 − s))`, against time, by least squares over the daily
/// points. A straight line in log-odds is a logistic adoption curve, the S shape that installs moving to newer
/// versions follow; a straight line in the share itself would run to zero too soon and miss the long tail of
/// installs that update late. Shares of exactly 0 or 1 are moved half an install inside (`0.5 / installs`) so their
/// log-odds are finite. The forecast date is where the line crosses the threshold's log-odds.
public struct GateForecast: Hashable, Sendable, JSONRepresentable {
    /// How the date was found, or why there is none.
    public enum Basis: String, Hashable, Sendable {
        /// Fitted to the daily points.
        case fit
        /// Today's share is at or under the threshold already: the gate can go now.
        case alreadyBelow
        /// Fewer daily points, or a shorter span of them, than a fit needs (``GateFinder/Configuration``).
        case tooThin
        /// The share is not falling (the fit's slope is zero or rising): no date.
        case notFalling
        /// Falling, but so slowly the crossing lies beyond the horizon: no date.
        case beyondHorizon
    }

    /// The share to fall under (`--threshold`).
    public var threshold: Double
    /// The forecast date (a day's start, UTC), nil unless `basis` is `fit` or `alreadyBelow`.
    public var date: Timestamp?
    /// How the date was found, or why there is none.
    public var basis: Basis

    /// Creates a forecast.
    public init(threshold: Double, date: Timestamp?, basis: Basis) {
        self.threshold = threshold
        self.date = date
        self.basis = basis
    }

    /// One day's share below the gate.
    public struct Point: Hashable, Sendable {
        /// The middle of the day, seconds since the epoch.
        public var at: Int64
        /// The share below, in `0...1`.
        public var share: Double
        /// All installs that day (the share's denominator).
        public var installs: Int64

        /// Creates a point.
        public init(at: Int64, share: Double, installs: Int64) {
            self.at = at
            self.share = share
            self.installs = installs
        }
    }

    /// The forecast from `points` (one per day with traffic, any order), made at `now` with today's share `current`.
    ///
    /// Needs at least `minPoints` points spanning at least `minSpanSeconds`; a crossing later than `horizonSeconds`
    /// after `now` is reported as beyond the horizon. A fitted crossing already in the past while today's share is
    /// still above the threshold is dated today (the line lags a fresh drop).
    public static func fit(
        points: [Point], current: Double, threshold: Double, now: Timestamp, minPoints: Int, minSpanSeconds: Int64,
        horizonSeconds: Int64
    ) -> GateForecast {
        if current <= threshold {
            return GateForecast(threshold: threshold, date: day(of: now.secondsSinceEpoch), basis: .alreadyBelow)
        }
        let times = points.map(\.at)
        guard points.count >= minPoints, let first = times.min(), let last = times.max(),
            last - first >= minSpanSeconds
        else { return GateForecast(threshold: threshold, date: nil, basis: .tooThin) }
        // Days from the first point, so the sums stay small and well conditioned.
        let xs = points.map { Double($0.at - first) / 86_400 }
        let ys = points.map { point -> Double in
            let margin = 0.5 / Double(max(point.installs, 1))
            return logOdds(min(max(point.share, margin), 1 - margin))
        }
        let count = Double(points.count)
        let meanX = xs.reduce(0, +) / count
        let meanY = ys.reduce(0, +) / count
        var covariance = 0.0
        var variance = 0.0
        for (x, y) in zip(xs, ys) {
            covariance += (x - meanX) * (y - meanY)
            variance += (x - meanX) * (x - meanX)
        }
        guard variance > 0 else { return GateForecast(threshold: threshold, date: nil, basis: .tooThin) }
        let slope = covariance / variance
        guard slope < 0 else { return GateForecast(threshold: threshold, date: nil, basis: .notFalling) }
        let intercept = meanY - slope * meanX
        let crossingDays = (logOdds(threshold) - intercept) / slope
        let crossing = first + Int64((crossingDays * 86_400).rounded())
        if crossing > now.secondsSinceEpoch + horizonSeconds {
            return GateForecast(threshold: threshold, date: nil, basis: .beyondHorizon)
        }
        return GateForecast(
            threshold: threshold, date: day(of: max(crossing, now.secondsSinceEpoch)), basis: .fit)
    }

    /// `{"threshold", "date", "basis"}`; `date` is `null` when there is none.
    public var jsonValue: JSONValue {
        .object([
            ("threshold", .number(threshold)), ("date", date.map { .string($0.rfc3339String) } ?? .null),
            ("basis", .string(basis.rawValue)),
        ])
    }

    static func logOdds(_ share: Double) -> Double { log(share / (1 - share)) }

    /// The start of the UTC day holding `seconds`.
    static func day(of seconds: Int64) -> Timestamp {
        Timestamp(secondsSinceEpoch: SpikeDetector.floor(seconds, to: 86_400))
    }
}
