import FlowmeterModels

/// The contract's app-version order, made total: numeric components first, then the original string.
enum VersionOrder {
    /// Whether `a` orders before `b`: `5.9.2` before `5.10.0`; `5.2` and `5.2.0` (equal numerically) by string.
    static func less(_ a: String, _ b: String) -> Bool {
        let left = AppVersion(a)
        let right = AppVersion(b)
        if left < right { return true }
        if right < left { return false }
        return a < b
    }
}
