import Foundation

/// The upper tail of an over-dispersed count: how likely a count at least this high is, given its expected value and
/// its dispersion (variance ÷ mean).
///
/// Diagnostics arrive pre-aggregated (one event with `count` 1–4 stands for several occurrences), and users come in
/// sessions, so a bucket's occurrences vary several times more than a Poisson count of the same mean. The
/// quasi-Poisson model takes that as a scale: `count ÷ φ` is Poisson with mean `expected ÷ φ`. It is exact for a
/// compound Poisson count whose events all carry the same `count` (φ is that count), and close for mixed ones; unlike
/// a negative binomial with the same variance, its tail thins as fast as a sum of a few bounded counts does, so a
/// series that usually holds one event is not thought capable of twenty.
enum QuasiPoisson {
    /// The natural log of P(X ≥ `count`) where `X ÷ dispersion` is Poisson with mean `expected ÷ dispersion`;
    /// `dispersion` is at least 1 (smaller values are taken as 1). 0 for a count of 0, `-infinity` where the count
    /// is impossible (a positive count against an expected 0).
    static func logUpperTail(count: Double, expected: Double, dispersion: Double) -> Double {
        let scale = max(dispersion, 1)
        return logRegularizedLowerGamma(count / scale, expected / scale)
    }

    /// log P(a, x), the regularized lower incomplete gamma function: for a whole `a`, the chance that a Poisson
    /// count of mean `x` is at least `a`, and its smooth extension between whole values.
    static func logRegularizedLowerGamma(_ a: Double, _ x: Double) -> Double {
        guard a > 0 else { return 0 }
        guard x > 0 else { return -.infinity }
        let logPrefix = a * log(x) - x - lgamma(a)
        if x < a + 1 {
            // The series P(a, x) = e^(-x) x^a / Γ(a + 1) · Σ x^n / ((a + 1)…(a + n)), which converges fast here.
            var term = 1 / a
            var sum = term
            var denominator = a
            for _ in 0..<500 {
                denominator += 1
                term *= x / denominator
                sum += term
                if term < sum * 1e-15 { break }
            }
            return logPrefix + log(sum)
        }
        // Q(a, x) = 1 - P(a, x) by its continued fraction (modified Lentz), then P = 1 - Q.
        let tiny = 1e-300
        var b = x + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var fraction = d
        for step in 1...500 {
            let an = -Double(step) * (Double(step) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            fraction *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        let upper = exp(logPrefix) * fraction
        return log1p(-min(upper, 1))
    }
}
