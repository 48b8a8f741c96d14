/// A backend deploy of the simulated hours, and the fault it ships, if any.
struct SimulatedDeploy: Sendable {
    /// What a deploy breaks.
    enum Fault: String, Sendable {
        /// A widget type only the newest app version renders, sent to every version (an ungated type).
        case ungatedType
        /// The same ungated type two days before, for an hour until the next deploy rolled it back: its return with
        /// ``ungatedType`` is a regression.
        case earlierUngatedType
        /// A misspelled widget type, sent to every version.
        case typo
        /// A payload missing a required key.
        case malformedPayload
    }

    let service: String
    let version: String
    /// Where in the simulated hours it finished, from 0 (start) to 1 (now); below 0 for deploys before them.
    let fraction: Double
    let fault: Fault?

    /// `service@version`, as the apps echo it in `backendRelease`.
    var release: String { "\(service)@\(version)" }
}
