public import FlowmeterModels
public import Rollups

/// Turns each run's findings into alerts that open, stay open, and resolve, remembering open alerts in the store.
///
/// A finding whose fingerprint has no open alert opens one; one that has stays open (its payload and value are
/// refreshed); an open alert in scope whose fingerprint no finding carries any more resolves at `now`. State lives in
/// the reader's `saveAlertState`/`openAlerts`, so a restarted `flowmeter watch` neither re-opens what is open nor
/// forgets to resolve it; pass an `InMemoryRollupStore` to keep it in memory. Not safe to run two evaluators over one
/// store at once: the read-compare-save is not one transaction.
public struct AlertEvaluator: Sendable {
    /// Which open alerts a run speaks for; alerts outside it are left alone, neither kept nor resolved.
    public struct Scope: Sendable, Hashable {
        /// Only alerts of this app; nil for every app.
        public var appID: String?
        /// Only alerts of these kinds.
        public var kinds: Set<AlertState.Kind>

        /// Creates a scope; by default every app and kind.
        public init(appID: String? = nil, kinds: Set<AlertState.Kind> = [.spike, .ungatedType, .newType]) {
            self.appID = appID
            self.kinds = kinds
        }

        func contains(_ state: AlertState) -> Bool {
            kinds.contains(state.kind) && (appID == nil || state.labels["app_id"] == appID)
        }
    }

    /// Where alert state is kept.
    public let store: any RollupReader

    /// Creates an evaluator keeping its state in `store`.
    public init(store: any RollupReader) {
        self.store = store
    }

    /// Compares `findings` with the open alerts in `scope`, saves the new states, and returns what changed.
    ///
    /// Findings with the same fingerprint collapse to the last one given. Throws what the store throws; nothing is
    /// saved then.
    public func evaluate(_ findings: [AlertFinding], at now: Timestamp, scope: Scope = Scope()) throws
        -> AlertEvaluation
    {
        var current: [String: AlertFinding] = [:]
        for finding in findings { current[finding.fingerprint] = finding }
        let open = try store.openAlerts().filter(scope.contains)
        let openByFingerprint = Dictionary(open.map { ($0.fingerprint, $0) }, uniquingKeysWith: { first, _ in first })

        var evaluation = AlertEvaluation()
        var states: [AlertState] = []
        for fingerprint in current.keys.sorted() {
            let finding = current[fingerprint]!
            let payload = finding.payload.serialized()
            if var state = openByFingerprint[fingerprint] {
                state.lastValue = finding.value
                state.payload = payload
                state.labels = finding.labels
                states.append(state)
                evaluation.continuing.append(Self.alert(state, finding: finding))
            } else {
                let state = AlertState(
                    fingerprint: fingerprint, kind: finding.kind, labels: finding.labels, openedAt: now,
                    lastValue: finding.value, payload: payload)
                states.append(state)
                evaluation.opened.append(Self.alert(state, finding: finding))
            }
        }
        for var state in open where current[state.fingerprint] == nil {
            state.resolvedAt = now
            states.append(state)
            evaluation.resolved.append(Self.resolvedAlert(state))
        }
        try store.saveAlertState(states)
        return evaluation
    }

    private static func alert(_ state: AlertState, finding: AlertFinding) -> Alert {
        Alert(
            fingerprint: state.fingerprint, status: .firing, kind: state.kind, labels: finding.labels,
            annotations: ["summary": finding.summary, "description": finding.description], startsAt: state.openedAt,
            endsAt: nil, payload: finding.payload)
    }

    private static func resolvedAlert(_ state: AlertState) -> Alert {
        let subject = [state.labels["widget_type"], state.labels["app_id"], state.labels["app_version"]]
            .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " in ")
        return Alert(
            fingerprint: state.fingerprint, status: .resolved, kind: state.kind, labels: state.labels,
            annotations: [
                "summary": "Resolved: \(state.labels["alertname"] ?? state.kind.rawValue) for \(subject)",
                "description": "No longer detected as of \(state.resolvedAt.map(\.rfc3339String) ?? "now").",
            ],
            startsAt: state.openedAt, endsAt: state.resolvedAt, payload: JSONValue(parsing: state.payload) ?? .null)
    }
}

/// What one evaluation changed.
public struct AlertEvaluation: Hashable, Sendable {
    /// Alerts opened by this run.
    public var opened: [Alert] = []
    /// Alerts that were open and still are.
    public var continuing: [Alert] = []
    /// Alerts resolved by this run.
    public var resolved: [Alert] = []

    /// An empty evaluation.
    public init() {}

    /// What Alertmanager should hear: every firing alert (re-sent each run so it does not time out) and every
    /// resolution.
    public var alertmanagerAlerts: [Alert] { opened + continuing + resolved }

    /// The transitions for `flowmeter.alerts.v1`: alerts as they open and resolve.
    public var messages: [AlertMessage] { (opened + resolved).map(\.message) }
}
