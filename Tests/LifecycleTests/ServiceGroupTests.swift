import Foundation
import Glibc
import Logging
import Synchronization
import Testing

@testable import Lifecycle

/// A service that records when it starts and stops, and can fail, end early or ignore cancellation.
final class RecordingService: Service {
    enum Behaviour: Sendable {
        case runsUntilCancelled
        case failsAtStart
        case endsAtOnce
        /// Blocks after cancellation, as a stuck C call would, until the test signals the semaphore.
        case ignoresCancellation(until: DispatchSemaphore)
    }

    struct Failure: Error, Equatable {}

    let name: String
    let behaviour: Behaviour
    let journal: Journal

    init(_ name: String, _ behaviour: Behaviour = .runsUntilCancelled, journal: Journal) {
        self.name = name
        self.behaviour = behaviour
        self.journal = journal
    }

    func run() async throws {
        journal.note("start \(name)")
        switch behaviour {
        case .runsUntilCancelled:
            await waitForShutdown()
        case .failsAtStart:
            journal.note("fail \(name)")
            throw Failure()
        case .endsAtOnce:
            break
        case .ignoresCancellation(let release):
            await waitForShutdown()
            // Blocks past its bound as a stuck C call would, until the test lets it go; the group must not wait.
            await onThread(named: "stuck") { release.wait() }
        }
        journal.note("stop \(name)")
    }
}

final class Journal: Sendable {
    private let lines = Mutex<[String]>([])
    func note(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }

    /// Waits until `line` is noted (a hang guard of two minutes ends a wait for a line that never comes).
    func waitFor(_ line: String) async {
        let deadline = ContinuousClock.now + .seconds(120)
        while !all.contains(line), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

@Suite struct ServiceGroupTests {
    static func logger(_ journal: Journal) -> Logger {
        Logger(threshold: .debug, format: .logfmt, sink: { journal.note("log " + $0) })
    }

    @Test func startsInOrderAndStopsInReverseOrderWhenShutDown() async throws {
        let journal = Journal()
        let group = ServiceGroup(
            ["a", "b", "c"].map { ServiceGroup.Entry(RecordingService($0, journal: journal)) },
            logger: Self.logger(journal), handlingSignals: false)
        let running = Task { try await group.run() }
        await journal.waitFor("start c")
        group.triggerShutdown(reason: "test")
        try await running.value
        let events = journal.all.filter { !$0.hasPrefix("log") }
        #expect(Array(events.prefix(3)).sorted() == ["start a", "start b", "start c"])
        #expect(Array(events.suffix(3)) == ["stop c", "stop b", "stop a"])
        #expect(journal.all.contains { $0.contains("shutting down") && $0.contains("reason=test") })
    }

    @Test func aServiceThatFailsStopsTheOthersAndTheErrorIsRethrown() async throws {
        let journal = Journal()
        let group = ServiceGroup(
            [
                ServiceGroup.Entry(RecordingService("publisher", journal: journal)),
                ServiceGroup.Entry(RecordingService("http", .failsAtStart, journal: journal)),
            ], logger: Self.logger(journal), handlingSignals: false)
        await #expect(throws: RecordingService.Failure.self) { try await group.run() }
        // The service started before the failing one is stopped too (Collector.start() left its flush thread).
        #expect(journal.all.contains("stop publisher"))
        #expect(journal.all.contains { $0.contains("service failed") && $0.contains("service=http") })
    }

    @Test func aServiceThatEndsOnItsOwnEndsTheGroup() async throws {
        let journal = Journal()
        let group = ServiceGroup(
            [
                ServiceGroup.Entry(RecordingService("loop", journal: journal)),
                ServiceGroup.Entry(RecordingService("once", .endsAtOnce, journal: journal)),
            ], logger: Self.logger(journal), handlingSignals: false)
        try await group.run()
        #expect(journal.all.contains("stop loop"))
    }

    @Test func aServicePastItsBoundIsLeftBehindAndTheNextIsStillStopped() async throws {
        let journal = Journal()
        let release = DispatchSemaphore(value: 0)
        // The stuck service's thread ends once the test is done with it, not after a time a slow machine can pass.
        defer { release.signal() }
        let group = ServiceGroup(
            [
                ServiceGroup.Entry(RecordingService("first", journal: journal)),
                ServiceGroup.Entry(
                    RecordingService("stuck", .ignoresCancellation(until: release), journal: journal),
                    shutdownTimeout: .milliseconds(200)),
            ], logger: Self.logger(journal), handlingSignals: false)
        let running = Task { try await group.run() }
        await journal.waitFor("start stuck")
        group.triggerShutdown()
        try await running.value
        #expect(journal.all.contains("stop first"))
        #expect(!journal.all.contains("stop stuck"))
        #expect(journal.all.contains { $0.contains("did not stop within its bound") && $0.contains("service=stuck") })
    }

    @Test func shutdownIsNotCancellationSoAStopPathsWaitsWait() async throws {
        let journal = Journal()
        let group = ServiceGroup(
            [ServiceGroup.Entry(DrainingService(journal: journal))], logger: Self.logger(journal),
            handlingSignals: false)
        let running = Task { try await group.run() }
        await journal.waitFor("start draining")
        group.triggerShutdown(reason: "test")
        try await running.value
        // The drain's sleep ran its course: the service was asked to stop, not cancelled.
        #expect(journal.all.contains("drained, cancelled: false"))
    }

    @Test func cancellationStillStopsAServiceOutsideAGroup() async {
        let journal = Journal()
        let service = RecordingService("alone", journal: journal)
        let task = Task { try await service.run() }
        await journal.waitFor("start alone")
        task.cancel()
        _ = await task.result
        #expect(journal.all.contains("stop alone"))
    }

    @Test func sleepUnlessShuttingDownEndsAtTheShutdownRequest() async throws {
        let journal = Journal()
        let group = ServiceGroup(
            [ServiceGroup.Entry(SleepingService(journal: journal))], logger: Self.logger(journal),
            handlingSignals: false)
        let running = Task { try await group.run() }
        await journal.waitFor("start sleeping")
        group.triggerShutdown()
        try await running.value
        #expect(journal.all.contains("slept: false"))
    }

    @Test func twoSubscriptionsOneAfterTheOtherEachHearTheSignal() async {
        // A real signal to this process (SIGUSR2: the in-process groups of other suites listen to SIGTERM and
        // SIGINT); while a subscription is live it only reaches the subscribers.
        for round in 1...2 {
            let signals = TerminationSignals(signals: [SIGUSR2])
            kill(getpid(), SIGUSR2)
            let received = await signals.wait()
            #expect(received == SIGUSR2, "round \(round)")
            signals.cancel()
        }
    }

    @Test func waitUntilCancelledReturnsWhenAlreadyCancelled() async {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await waitUntilCancelled()
            return true
        }
        #expect(await task.value)
    }

    @Test func onThreadReturnsTheValueAndRethrows() async throws {
        #expect(await onThread(named: "flowmeter-test") { 6 * 7 } == 42)
        await #expect(throws: RecordingService.Failure.self) {
            try await onThread(named: "flowmeter-test") { () throws -> Int in throw RecordingService.Failure() }
        }
    }
}

/// Sleeps in its stop path, as a drain does; notes whether the sleep was cut short by cancellation.
final class DrainingService: Service {
    let name = "draining"
    let journal: Journal

    init(journal: Journal) { self.journal = journal }

    func run() async throws {
        journal.note("start draining")
        await waitForShutdown()
        let cancelled: Bool
        do {
            try await Task.sleep(for: .milliseconds(50))
            cancelled = false
        } catch {
            cancelled = true
        }
        journal.note("drained, cancelled: \(cancelled)")
    }
}

/// Sleeps an hour between turns, unless asked to shut down.
final class SleepingService: Service {
    let name = "sleeping"
    let journal: Journal

    init(journal: Journal) { self.journal = journal }

    func run() async throws {
        journal.note("start sleeping")
        let slept = await sleepUnlessShuttingDown(for: .seconds(3_600))
        journal.note("slept: \(slept)")
    }
}
