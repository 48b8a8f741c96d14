/// How long a test waits for something the code under test does on its own threads before it calls the wait failed.
///
/// The bound is a hang guard, not a timing claim: it only ends a wait for an event that truly never comes, so it is
/// generous enough for a machine whose every core is busy (`make test-soak SOAK_BUSY=1`). A test never decides its
/// outcome by sleeping; it polls the condition that the event makes true, and asserts on what it sees.
public enum Eventually {
    /// The default bound of `eventually`.
    public static let hangGuard: Duration = .seconds(120)
}

/// Polls `condition` every `interval` until it holds or `timeout` passes; returns whether it held, so the caller
/// asserts on it (`#expect(await eventually { … })`).
///
/// `timeout` is raised to at least `minimum` (30 s): a shorter one would make a loaded machine's slowness a failure.
/// Pass a shorter bound only through `minimum:` where a test is about a deadline of the code itself.
public func eventually(
    timeout: Duration = Eventually.hangGuard, minimum: Duration = .seconds(30),
    every interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + max(timeout, minimum)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
