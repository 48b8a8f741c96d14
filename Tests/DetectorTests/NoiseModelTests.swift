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
