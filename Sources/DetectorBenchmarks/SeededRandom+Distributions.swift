public import FlowmeterWire
import Foundation

extension SeededRandom {
    /// A standard normal variate (Box–Muller).
    public mutating func normal() -> Double {
        let u = max(unit(), 1e-300)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * unit())
    }

    /// A Poisson variate of mean `mean`: exact by multiplication for small means, normal beyond 30.
    public mutating func poisson(_ mean: Double) -> Int {
        guard mean > 0 else { return 0 }
        if mean > 30 { return max(0, Int((mean + mean.squareRoot() * normal()).rounded())) }
        let limit = exp(-mean)
        var product = unit()
        var count = 0
        while product > limit {
            count += 1
            product *= unit()
        }
        return count
    }
}
