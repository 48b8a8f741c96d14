import DetectorBenchmarks
import FlowmeterWire
import Foundation
import Testing

@testable import Detector

@Suite struct NoiseModelTests {
    @Test(arguments: [(0.5, 3), (2.0, 6), (10.0, 20), (40.0, 60)])
    func theTailMatchesPoissonWithoutDispersion(mean: Double, count: Int) {
        // P(X ≥ k) for a Poisson of `mean`, summed directly.
        var term = 1.0
        var below = 0.0
        for k in 0..<count {
            if k > 0 { term *= mean / Double(k) }
            below += term
        }
        let exact = 1 - below * Foundation.exp(-mean)
        let tail = QuasiPoisson.logUpperTail(count: Double(count), expected: mean, dispersion: 1)
        #expect(abs(Foundation.exp(tail) - exact) < 1e-9 + exact * 1e-6, "\(Foundation.exp(tail)) vs \(exact)")
    }

    @Test func dispersionShrinksTheTail() {
        let poisson = QuasiPoisson.logUpperTail(count: 30, expected: 10, dispersion: 1)
        let dispersed = QuasiPoisson.logUpperTail(count: 30, expected: 10, dispersion: 3)
        #expect(poisson < dispersed)
        #expect(QuasiPoisson.logUpperTail(count: 0, expected: 10, dispersion: 3) == 0)
        #expect(QuasiPoisson.logUpperTail(count: 5, expected: 0, dispersion: 3) == -.infinity)
    }

    @Test func dispersionOfPreAggregatedCountsIsAboutThree() {
        // Poisson events each carrying count 1–4: variance ÷ mean is E[c²] ÷ E[c] = 7.5 ÷ 2.5 = 3.
        var random = SeededRandom(seed: 3)
        var counts: [Int64: Int64] = [:]
        for bucket in Int64(0)..<2000 {
            var total: Int64 = 0
            for _ in 0..<random.poisson(8) { total += Int64(1 + random.next() % 4) }
            counts[bucket * 300] = total
        }
        let dispersion = Dispersion(counts: counts, from: 0, to: 2000 * 300, bucketSeconds: 300) { _ in true }
        #expect(dispersion.ratio > 2.6 && dispersion.ratio < 3.4, "\(dispersion.ratio)")
        // A past flood in the history does not make the series look erratic: its edges are trimmed.
        var flooded = counts
        for bucket in Int64(100)..<112 { flooded[bucket * 300] = 400 }
        let trimmed = Dispersion(counts: flooded, from: 0, to: 2000 * 300, bucketSeconds: 300) { _ in true }
        #expect(trimmed.ratio < 4, "\(trimmed.ratio)")
    }
}

/// A window that reaches back to the store's first data has no history before it to give a series its long-run rate:
/// the rate comes from the buckets judged so far instead (``NoiseModel/RunningRate``), so a series that arrives in
/// heavy uploads and is silent between them is not judged as if it were silent (the false incident DemoTests printed
/// at some end times: 5 travel malformed payloads from two installs against a level of 0.1).
@Suite struct RunningRateTests {
    let start = History.time("2026-11-30T00:00:00Z")
    let end = History.time("2026-12-02T12:00:00Z")

    /// Buckets from the window's start on: every 31st a heavy upload (2,500 decodes, one event, or `counts[bucket]`),
    /// the rest light (10 decodes, no events); the app's three installs in each.
    func history(counts: [Int64: (events: Int64, installs: Int)]) -> History {
        let history = History()
        var index: Int64 = 0
        while start.adding(seconds: index * 300) < end {
            let at = start.adding(seconds: index * 300)
            let heavy = index % 31 == 0
            history.traffic(at: at, batches: heavy ? 2 : 1, decodes: heavy ? 2_500 : 10, installs: 3)
            if heavy {
                let planted = counts[index] ?? (1, 1)
                history.events(
                    planted.events, kind: .malformedPayload, type: "title_block", at: at, installs: planted.installs)
            }
            index += 1
        }
        return history
    }

    @Test func heavyUploadsAreJudgedAgainstTheRateSoFarWhenNothingCameBeforeTheWindow() throws {
        // Bucket 558 (day 2, 22:30) is heavy: five events from two of the app's three installs, against a rate of
        // about one event per heavy upload. Buckets 186 (day 1, 15:30) and 372 (day 2, 07:00) hold real spikes: the
        // second, 20 events, is found only if the first one's 400 stay out of the rate it is judged against.
        let history = history(counts: [186: (400, 3), 372: (20, 3), 558: (5, 2)])
        let report = try SpikeDetector().report(reader: history.store, from: start, to: end)
        let onsets = Set(report.spikes.map(\.onset))
        #expect(onsets == [start.adding(seconds: 186 * 300), start.adding(seconds: 372 * 300)], "\(report.spikes)")
        #expect(report.incidents.count == 2, "\(report.incidents)")
    }

    @Test func theRunningRateCountsOnlyBucketsWithBatches() {
        var rate = NoiseModel.RunningRate()
        rate.add(count: 1, traffic: Traffic(batches: 2, decodes: 1_000))
        rate.add(count: 9, traffic: nil)
        rate.add(count: 0, traffic: Traffic(batches: 0, decodes: 0))
        #expect(rate.level(for: Traffic(batches: 1, decodes: 2_000)) == 2)
        #expect(rate.level(for: Traffic(batches: 4, decodes: 0)) == 2)
        #expect(rate.level(for: nil) == 0)
        #expect(NoiseModel.RunningRate().level(for: Traffic(batches: 1, decodes: 10)) == 0)
    }
}
