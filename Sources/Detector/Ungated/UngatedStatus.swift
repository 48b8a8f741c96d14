/// Whether an ungated type is news, still going on, or back after the backend had stopped sending it.
public enum UngatedStatus: String, Hashable, Sendable, CaseIterable {
    /// No release build reported it as `unknownType` before the window.
    case new
    /// Reported before the window, with no quiet stretch as long as the regression threshold since.
    case ongoing
    /// Reported before, then quiet for at least the regression threshold (the backend gated or fixed it), and back
    /// in the window.
    case regressed
}
