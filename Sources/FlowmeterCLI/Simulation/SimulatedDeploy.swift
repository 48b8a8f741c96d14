/// A backend deploy of the simulated hours, and the fault it ships, if any.
struct SimulatedDeploy: Sendable {
    /// What a deploy breaks.
    enum Fault: String, Sendable {
        /// A widget type only the newest app version renders, sent to every version (an ungated type).
        case ungatedType
        /// A misspelled widget type, sent to every version.
        case typo
        /// A payload missing a required key.
        case malformedPayload
    }

    let service: String
    let version: String
    /// Where in the simulated hours it finished, from 0 (start) to 1 (now).
    let fraction: Double
    let fault: Fault?

    /// `service@version`, as the apps echo it in `backendRelease`.
    var release: String { "\(service)@\(version)" }
}
