public import FlowmeterModels
public import Rollups

/// Attributes a finding to a backend deploy: by the release its earliest events carry first, by time second.
///
/// docs/api.md#query-output: the recorded deploy whose `service@version` is the `backendRelease` carried by the
/// earliest events wins, even when another deploy finished closer in time; only when no carried release names a
/// recorded deploy does the deploy that finished closest before `firstSeen`, within `deployWindow`, stand in.
public struct DeployAttributor: Sendable {
    /// The recorded deploys to choose from.
    public let deploys: [DeployMarker]
    /// How long before `firstSeen` a deploy may have finished to be suspected on timing alone.
    public let deployWindow: Duration

    /// Creates an attributor over `deploys`, which should reach back far enough to hold the deploy of any release
    /// still being served (the finders read 30 days before the window).
    public init(deploys: [DeployMarker], deployWindow: Duration = .seconds(3600)) {
        self.deploys = deploys
        self.deployWindow = deployWindow
    }

    /// The suspect deploy for events first seen at `firstSeen` whose earliest events carried `earliestReleases`
    /// (release → events); nil when neither a release nor the timing points at a recorded deploy.
    ///
    /// Releases are tried most frequent first (ties by name). When one release was deployed several times, the last
    /// deploy that finished at or before `firstSeen` is taken, else the first after it.
    public func suspect(firstSeen: Timestamp, earliestReleases: [String: Int64]) -> SuspectDeploy? {
        let byRelease = Dictionary(grouping: deploys, by: \.release)
        let ranked = earliestReleases.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        for (release, _) in ranked {
            guard let candidates = byRelease[release], !candidates.isEmpty else { continue }
            let sorted = candidates.sorted(by: Self.finishedFirst)
            let chosen = sorted.last { $0.finishedAt <= firstSeen } ?? sorted[0]
            return Self.suspect(chosen, firstSeen: firstSeen, evidence: .backendRelease)
        }
        let windowSeconds = deployWindow.components.seconds
        let recent = deploys.filter {
            $0.finishedAt <= firstSeen && firstSeen.secondsSinceEpoch - $0.finishedAt.secondsSinceEpoch <= windowSeconds
        }
        guard let closest = recent.sorted(by: Self.finishedFirst).last else { return nil }
        return Self.suspect(closest, firstSeen: firstSeen, evidence: .timing)
    }

    /// ``suspect(firstSeen:earliestReleases:)``, except that a release blamed by comparison (``CanaryComparison``) is
    /// tried first: when it names a recorded deploy that had begun (`startedAt`, else `finishedAt`) by
    /// ``comparisonTolerance`` after `firstSeen`, that deploy is the suspect.
    ///
    /// The bound keeps the comparison from blaming a later release that went on serving what an earlier one shipped:
    /// in a rollover from `-3` (which shipped a typo) to `-4` (which kept it and added another diagnostic), the two
    /// overlap and may compare either way, but only `-3` was serving when the typo began.
    public func suspect(firstSeen: Timestamp, earliestReleases: [String: Int64], blamed: String?) -> SuspectDeploy? {
        if let blamed, let byComparison = suspect(firstSeen: firstSeen, earliestReleases: [blamed: 1]),
            byComparison.evidence == .backendRelease,
            let deploy = deploys.first(where: { $0.release == blamed && $0.finishedAt == byComparison.finishedAt }),
            (deploy.startedAt ?? deploy.finishedAt).secondsSinceEpoch
                <= firstSeen.secondsSinceEpoch + Self.comparisonTolerance
        {
            return byComparison
        }
        return suspect(firstSeen: firstSeen, earliestReleases: earliestReleases)
    }

    /// How long after a finding's first events (for a spike: its onset bucket's start) a release blamed by comparison
    /// may have begun deploying and still be blamed: the comparison's bucket (15 minutes), since a spike's onset is
    /// the start of its bucket and the deploy's clock is not the devices'.
    public static let comparisonTolerance: Int64 = 900

    // Deterministic when two deploys finish in the same instant: by service, version, then id.
    private static func finishedFirst(_ a: DeployMarker, _ b: DeployMarker) -> Bool {
        if a.finishedAt != b.finishedAt { return a.finishedAt < b.finishedAt }
        if a.service != b.service { return a.service < b.service }
        if a.version != b.version { return a.version < b.version }
        return a.id < b.id
    }

    private static func suspect(_ deploy: DeployMarker, firstSeen: Timestamp, evidence: SuspectDeploy.Evidence)
        -> SuspectDeploy
    {
        // Whole seconds, rounded down, so a lag under a second reads 0 and never a fraction.
        var lag = firstSeen.secondsSinceEpoch - deploy.finishedAt.secondsSinceEpoch
        if firstSeen.nanoseconds < deploy.finishedAt.nanoseconds { lag -= 1 }
        return SuspectDeploy(
            service: deploy.service, version: deploy.version, finishedAt: deploy.finishedAt, lagSeconds: lag,
            evidence: evidence)
    }
}
