import FlowmeterModels

/// The contract's app-version order, made total: numeric components first, then the original string.
public enum VersionOrder {
    /// Whether `a` orders before `b`: `5.9.2` before `5.10.0`; `5.2` and `5.2.0` (equal numerically) by string.
    ///
    /// A strict weak order over strings, so it is safe for `sorted(by:)` and `max(by:)`.
    public static func less(_ a: String, _ b: String) -> Bool {
        let left = AppVersion(a)
        let right = AppVersion(b)
        if left < right { return true }
        if right < left { return false }
        return a < b
    }
}
