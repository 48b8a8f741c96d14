import FlowmeterReporter
import Foundation
import Synchronization

/// A reporter clock that only moves when the test says so; tests see who sleeps until when.
///
/// Its uptime moves with `advance`; `setWallClock(by:)` moves only the wall clock, as a user or the network setting
/// the time does. `sleepers(atLeast:)` returns once that many tasks sleep on the clock, so a test can tell that the
/// reporter has finished an attempt and decided when to try next, without any real sleep. Its one bound in real time
/// (120 s, for a machine whose other tests hold the cooperative threads a while) is a hang guard, not a timing
/// assertion.
final class ManualClock: ReporterClock {
    private struct Sleeper {
        /// The uptime it waits for.
        var deadline: TimeInterval
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var uptime: TimeInterval = 1_000
        /// The wall clock minus the uptime, in seconds since 1970.
        var wallOffset: TimeInterval
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0

        var now: Date { Date(timeIntervalSince1970: uptime + wallOffset) }
    }

    private let state: Mutex<State>

    /// Starts at `start`, by default the current time in whole seconds (batches carry it as `sentAt`, and the
    /// collector's skew correction trusts it).
    init(start: Date = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))) {
        state = Mutex(State(wallOffset: start.timeIntervalSince1970 - 1_000))
    }

    func now() -> Date { state.withLock { $0.now } }

    func uptime() -> TimeInterval { state.withLock { $0.uptime } }

    func sleep(until deadline: Date) async throws {
        let uptime = state.withLock { deadline.timeIntervalSince1970 - $0.wallOffset }
        try await sleep(untilUptime: uptime)
    }

    func sleep(untilUptime deadline: TimeInterval) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.uptime { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time on to `date` by the wall clock (never backwards; the uptime moves as much) and wakes every sleeper
    /// whose deadline has come.
    func advance(to date: Date) {
        let due = state.withLock { state -> [Sleeper] in
            state.uptime = max(state.uptime, date.timeIntervalSince1970 - state.wallOffset)
            let due = state.sleepers.filter { $0.value.deadline <= state.uptime }
            for id in due.keys { state.sleepers[id] = nil }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves time on by `seconds`.
    func advance(by seconds: TimeInterval) {
        advance(to: now().addingTimeInterval(seconds))
    }

    /// Sets the wall clock `seconds` forward (or back, when negative) without any time passing.
    func setWallClock(by seconds: TimeInterval) {
        state.withLock { $0.wallOffset += seconds }
    }

    /// Waits until at least `count` tasks sleep on the clock; returns their deadlines by the wall clock as it is
    /// now, earliest first.
    ///
    /// A count alone can be met by a sleeper on its way out (the loop's wait toward a deadline that a signal has just
    /// ended): a test that must see the reporter's decision after an attempt first waits for the attempt itself (the
    /// stub's upload), or waits with `sleepers(where:)` for the deadline it expects.
    func sleepers(atLeast count: Int) async throws -> [Date] {
        try await sleepers(description: "at least \(count) sleepers") { $0.count >= count }
    }

    /// Waits until the deadlines of the tasks sleeping on the clock, earliest first, satisfy `condition`; returns
    /// them. Throws (with the deadlines it last saw) only when they never do within the hang guard.
    func sleepers(
        description: String = "the sleepers a test waits for", where condition: ([Date]) -> Bool
    ) async throws -> [Date] {
        let guardDeadline = ContinuousClock.now + .seconds(120)
        var deadlines: [Date] = []
        while ContinuousClock.now < guardDeadline {
            deadlines = state.withLock { state in
                state.sleepers.values.map { Date(timeIntervalSince1970: $0.deadline + state.wallOffset) }.sorted()
            }
            if condition(deadlines) { return deadlines }
            await Task.yield()
            try await Task.sleep(for: .milliseconds(1))
        }
        let now = self.now()
        throw ClockTimeout(
            description:
                "no \(description) after 120 s; sleeping until now + \(deadlines.map { $0.timeIntervalSince(now) }) s")
    }

    struct ClockTimeout: Error, CustomStringConvertible {
        var description: String
    }
}
