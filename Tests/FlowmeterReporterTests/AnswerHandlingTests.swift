import FlowmeterModels
import Foundation
import HTTPServer
import Testing

@testable import FlowmeterReporter

/// docs/api.md#client-sdk's answer table end to end: a real reporter uploading to a real HTTP server on 127.0.0.1 that
/// gives the scripted answers, with the reporter's clock moved by hand (no sleeps).
@Suite struct AnswerHandlingTests {
    /// Records one event and starts a flush; returns once its first upload has reached the stub.
    private func firstAttempt(
        _ stub: StubCollector, _ fixture: ReporterFixture, clock: ManualClock,
        configure: (inout ReporterConfiguration) -> Void = { _ in }
    ) async throws -> (FlowmeterReporter, Task<FlushOutcome, Never>) {
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configure(&configuration)
        let reporter = try FlowmeterReporter(configuration: configuration)
        reporter.record(ReporterFixture.event(id: "event-1", at: clock.now()))
        let flush = startFlush(reporter)
        // Until the upload arrives the reporter's loop may still sleep toward its batching deadline, and that sleeper
        // with the flush's own makes the two a caller waits for (seen under a loaded `make test`). Once the upload
        // is in, the loop's next sleeper is the decision about the answer.
        try #require(try await stub.waitForUploads(1), "the first attempt never arrived")
        return (reporter, flush)
    }

    @Test(arguments: [(429, "120", 120.0), (503, "45", 45), (503, nil, 60), (429, nil, 60)])
    func rateLimitAndUnavailableWaitForRetryAfterAndKeepTheBatchID(
        status: Int, retryAfter: String?, seconds: Double
    ) async throws {
        let stub = try StubCollector([StubCollector.error(status, retryAfter: retryAfter)])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let start = clock.now()
        // No jitter drawn: the wait is exactly Retry-After (retryAfterJitterSpreadsTheWait covers the jitter).
        let (reporter, flush) = try await firstAttempt(stub, fixture, clock: clock) { $0.randomUnit = { 0 } }
        // Two sleepers: the flush's timeout and the loop waiting for Retry-After.
        let deadlines = try await clock.sleepers(atLeast: 2)
        #expect(deadlines[0] == start.addingTimeInterval(seconds))
        #expect(stub.received.count == 1)
        clock.advance(by: seconds - 1)
        #expect(try await clock.sleepers(atLeast: 2) == deadlines, "nothing is sent before Retry-After")
        #expect(stub.received.count == 1)
        clock.advance(to: deadlines[0])
        #expect(await finished(flush) == .delivered)
        let ids = stub.received.map(\.batch.id)
        #expect(ids.count == 2 && ids[0] != nil && ids[0] == ids[1])
        #expect(stub.received.allSatisfy { $0.batch.events.map(\.id) == ["event-1"] })
        #expect(fixture.batchFiles().isEmpty)
        await reporter.close()
    }

    @Test func retryAfterAsAnHTTPDate() async throws {
        let clock = ManualClock()
        let start = clock.now()
        let date = RetryAfterFormat.imfFixdate(start.addingTimeInterval(90))
        let stub = try StubCollector([StubCollector.error(429, retryAfter: date)])
        let fixture = try ReporterFixture()
        let (reporter, flush) = try await firstAttempt(stub, fixture, clock: clock) { $0.randomUnit = { 0 } }
        let deadlines = try await clock.sleepers(atLeast: 2)
        #expect(deadlines[0] == start.addingTimeInterval(90), "\(date)")
        clock.advance(to: deadlines[0])
        #expect(await finished(flush) == .delivered)
        #expect(stub.received.count == 2)
        await reporter.close()
    }

    /// Backpressure: the SDK adds its own jitter to the server's Retry-After, so apps that got the same 503 at the
    /// same moment come back spread out: never before Retry-After, at most a quarter (at least 1 s) after it.
    @Test(arguments: [(503, "8", 8.0), (429, "60", 60)])
    func retryAfterJitterSpreadsTheWait(status: Int, retryAfter: String, seconds: Double) async throws {
        var waits: [Double] = []
        for draw in [0.1, 0.5, 0.9] {
            let stub = try StubCollector([StubCollector.error(status, retryAfter: retryAfter)])
            let fixture = try ReporterFixture()
            let clock = ManualClock()
            let start = clock.now()
            let (reporter, flush) = try await firstAttempt(stub, fixture, clock: clock) { $0.randomUnit = { draw } }
            let expected = start.addingTimeInterval(seconds + draw * max(1, seconds * 0.25))
            func isExpected(_ date: Date) -> Bool { abs(date.timeIntervalSince(expected)) < 0.001 }
            let deadlines = try await clock.sleepers(where: { $0.contains(where: isExpected) })
            let wait = try #require(deadlines.first(where: isExpected)).timeIntervalSince(start)
            #expect(wait >= seconds && wait <= seconds + max(1, seconds * 0.25))
            waits.append(wait)
            clock.advance(by: seconds - 0.001)
            #expect(stub.received.count == 1, "nothing is sent before Retry-After")
            // A hair past it: the deadline went through a wall-clock Date and back, which can round it down.
            clock.advance(to: try #require(deadlines.first(where: isExpected)).addingTimeInterval(0.001))
            #expect(await finished(flush) == .delivered)
            #expect(stub.received.count == 2)
            await reporter.close()
        }
        #expect(Set(waits).count == waits.count, "different draws wait differently: \(waits)")
    }

    @Test func serverErrorsAndNoAnswerBackOffExponentiallyWithTheSameID() async throws {
        let stub = try StubCollector([
            StubCollector.error(500), StubCollector.error(502), StubCollector.error(504), StubCollector.error(408),
        ])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let (reporter, flush) = try await firstAttempt(stub, fixture, clock: clock)
        // The jitter is pinned to its cap (ReporterFixture), so each wait is the cap: 2 s doubling.
        for (attempt, cap) in [2.0, 4, 8, 16].enumerated() {
            let now = clock.now()
            let deadlines = try await clock.sleepers(atLeast: 2)
            #expect(deadlines[0] == now.addingTimeInterval(cap), "attempt \(attempt + 1)")
            #expect(stub.received.count == attempt + 1)
            clock.advance(to: deadlines[0])
        }
        #expect(await finished(flush) == .delivered)
        #expect(Set(stub.received.map(\.batch.id)).count == 1)
        await reporter.close()
    }

    @Test func networkErrorsBackOffUpToFiveMinutes() async throws {
        // Nothing listens on port 9 of 127.0.0.1 (discard is never run here): every attempt gets no answer.
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let attempts = AttemptLog()
        var configuration = fixture.configuration(endpoint: URL(string: "http://127.0.0.1:9")!, clock: clock)
        configuration.onUpload = { attempts.append($0) }
        let reporter = try FlowmeterReporter(configuration: configuration)
        reporter.record(ReporterFixture.event(at: clock.now()))
        let flush = startFlush(reporter)
        var waits: [TimeInterval] = []
        for _ in 0..<10 {
            let now = clock.now()
            let deadline = try await clock.sleepers(atLeast: 2)[0]
            waits.append(deadline.timeIntervalSince(now))
            clock.advance(to: deadline)
        }
        #expect(waits == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
        #expect(attempts.all.prefix(10).allSatisfy { $0.status == nil })
        #expect(Set(attempts.all.map(\.batchID)).count == 1)
        #expect(fixture.batchFiles().count == 1, "the batch stays on disk")
        await reporter.close()
        #expect(await finished(flush) == .closed)
    }

    @Test func payloadTooLargeSplitsUntilTheHalvesFitAndDropsOneOversizedEvent() async throws {
        // The stub takes at most two events per batch, and never the event marked oversized.
        let stub = try StubCollector { upload, _ in
            let events = upload.batch.events
            if events.count > 2 || events.contains(where: { $0.widgetType == "oversized" }) {
                return StubCollector.error(413)
            }
            return StubCollector.accepted(events.count)
        }
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        for index in 0..<7 {
            reporter.record(ReporterFixture.event(id: "e\(index)", widgetType: "w\(index)", at: clock.now()))
        }
        reporter.record(ReporterFixture.event(id: "big", widgetType: "oversized", count: 3, at: clock.now()))
        reporter.recordDecodes(4)
        #expect(await flushed(reporter) == .dropped)
        let delivered = stub.received.filter {
            $0.batch.events.count <= 2 && $0.batch.events.allSatisfy { $0.widgetType != "oversized" }
        }
        let deliveredIDs = delivered.flatMap { $0.batch.events.compactMap(\.id) }
        #expect(deliveredIDs.sorted() == (0..<7).map { "e\($0)" })
        #expect(delivered.reduce(0) { $0 + ($1.batch.decodes ?? 0) } == 4, "decodes are sent once")
        let firstID = try #require(stub.received.first?.batch.id)
        #expect(stub.received.allSatisfy { $0.batch.id?.hasPrefix(firstID) == true }, "halves derive their ids")
        #expect(Set(delivered.compactMap(\.batch.id)).count == delivered.count)
        #expect(fixture.batchFiles().isEmpty)

        // The dropped event rides on the next batch's client report, with its count.
        reporter.record(ReporterFixture.event(id: "after", at: clock.now()))
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.last?.discarded == ["payload_too_large": 3])
        await reporter.close()
    }

    @Test(arguments: [401, 403])
    func unauthorizedDropsTheBatchAndPausesUploadsForTheProcess(status: Int) async throws {
        let stub = try StubCollector([StubCollector.error(status)])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        reporter.record(ReporterFixture.event(id: "first", at: clock.now()))
        #expect(await flushed(reporter) == .uploadsPaused)
        reporter.record(ReporterFixture.event(id: "second", at: clock.now()))
        #expect(await flushed(reporter) == .uploadsPaused)
        clock.advance(by: 3_600)
        #expect(await flushed(reporter) == .uploadsPaused)
        #expect(stub.received.count == 1, "nothing more is sent by this process")
        await reporter.close()
        #expect(fixture.batchFiles().count == 1, "the second batch waits on disk")

        // The next process (a fixed key, say) sends it, with the dropped first batch in its client report.
        let next = try FlowmeterReporter(configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        #expect(await flushed(next) == .delivered)
        #expect(stub.received.count == 2)
        #expect(stub.received[1].batch.events.compactMap(\.id) == ["second"])
        #expect(stub.received[1].discarded == ["send_error": 1])
        await next.close()
    }

    @Test(arguments: [400, 404, 415, 422])
    func otherClientErrorsDropTheBatchAsSendError(status: Int) async throws {
        let stub = try StubCollector([StubCollector.error(status)])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        reporter.record(ReporterFixture.event(id: "refused", count: 2, at: clock.now()))
        #expect(await flushed(reporter) == .dropped)
        reporter.record(ReporterFixture.event(id: "taken", at: clock.now()))
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.map { $0.batch.events.compactMap(\.id) } == [["refused"], ["taken"]])
        #expect(stub.received[1].discarded == ["send_error": 2])
        await reporter.close()
    }

    @Test func aFlushTimesOutWhileRetryAfterHoldsTheBatch() async throws {
        let stub = try StubCollector([StubCollector.error(503, retryAfter: "600")])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        reporter.record(ReporterFixture.event(at: clock.now()))
        let flush = startFlush(reporter, timeout: 30)
        let deadlines = try await clock.sleepers(atLeast: 2)
        // Retry-After 600 plus the SDK's jitter, the fixture's draw of 1 taking all of it: a quarter.
        #expect(deadlines.map { $0.timeIntervalSince(clock.now()) } == [30, 750])
        clock.advance(to: deadlines[0])
        #expect(await finished(flush) == .timedOut)
        #expect(fixture.batchFiles().count == 1)
        await reporter.close()
    }
}

/// Upload attempts seen through `onUpload`.
final class AttemptLog: Sendable {
    private let attempts = Locked<[UploadAttempt]>([])

    func append(_ attempt: UploadAttempt) { attempts.withLock { $0.append(attempt) } }

    var all: [UploadAttempt] { attempts.withLock { $0 } }
}

/// HTTP dates for `Retry-After`.
enum RetryAfterFormat {
    static func imfFixdate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
