import FlowmeterModels
import Foundation
import Testing

@testable import FlowmeterReporter

#if canImport(Glibc)
    import Glibc
#endif

/// The disk queue: pre-aggregation and its caps, the storage limits and what they drop, pacing, flushes, clearing,
/// and what a reporter never shows.
@Suite struct QueueTests {
    @Test func identicalEventsWithoutAnIDBecomeOneWithTheCountSummed() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        let first = clock.now()
        reporter.record(ReporterFixture.event(at: first))
        clock.advance(by: 1)
        for _ in 0..<3 { reporter.record(ReporterFixture.event(at: clock.now())) }
        reporter.record(ReporterFixture.event(count: 6, at: clock.now()))
        for index in 0..<3 { reporter.record(ReporterFixture.event(id: "own-\(index)", at: clock.now())) }
        var other = ReporterFixture.event(at: clock.now())
        other.message = "Unknown widget type 'hologram_projector' (again)"
        reporter.record(other)
        reporter.recordDecodes(3)
        #expect(await flushed(reporter) == .delivered)
        let events = try #require(stub.received.first?.batch.events)
        #expect(events.count == 5)
        #expect(events[0].count == 10 && events[0].id == nil, "1 + 3 + 6 occurrences in one event")
        #expect(events[0].occurredAt == Timestamp(first), "the first occurrence's time")
        #expect(events[1...3].map(\.id) == ["own-0", "own-1", "own-2"], "events with ids never merge")
        #expect(events[4].count == 1 && events[4].message?.hasSuffix("(again)") == true)
        #expect(stub.received.first?.batch.decodes == 3)
        await reporter.close()
    }

    @Test func eventsPastThePerDecodeCapAreCutAndCounted() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        for index in 0..<103 { reporter.record(ReporterFixture.event(id: "a\(index)", at: clock.now())) }
        reporter.record(ReporterFixture.event(id: "a-many", count: 4, at: clock.now()))
        reporter.recordDecodes(1)
        reporter.record(ReporterFixture.event(id: "next-decode", at: clock.now()))
        reporter.recordDecodes(1)
        #expect(await flushed(reporter) == .delivered)
        let upload = try #require(stub.received.first)
        #expect(upload.batch.events.count == 101)
        #expect(upload.batch.events.last?.id == "next-decode")
        #expect(upload.discarded == ["cap_exceeded": 7], "3 events and one of count 4")
        await reporter.close()
    }

    @Test func newKeysPastTheDistinctKeyCapAreCutAndCounted() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configuration.batching.maxEvents = 5_000
        configuration.batching.maxDistinctKeys = 10
        let reporter = try FlowmeterReporter(configuration: configuration)
        for index in 0..<15 {
            reporter.record(ReporterFixture.event(widgetType: "type_\(index)", at: clock.now()))
            reporter.record(ReporterFixture.event(widgetType: "type_\(index)", at: clock.now()))
            reporter.recordDecodes(1)
        }
        #expect(await flushed(reporter) == .delivered)
        let upload = try #require(stub.received.first)
        #expect(upload.batch.events.map(\.widgetType) == (0..<10).map { "type_\($0)" })
        #expect(upload.batch.events.allSatisfy { $0.count == 2 })
        #expect(upload.discarded == ["cap_exceeded": 10])
        await reporter.close()
    }

    @Test func overTheByteLimitTheOldestBatchesGoAndAreCounted() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configuration.batching.maxEvents = 5
        configuration.storage.maxBytes = 8 * 1024
        configuration.uploads.initialDelay = 86_400
        let reporter = try FlowmeterReporter(configuration: configuration)
        for index in 0..<80 {
            reporter.record(ReporterFixture.event(id: String(format: "e%02d", index), at: clock.now()))
            clock.advance(by: 0.01)
            if index % 10 == 4 { reporter.recordDecodes(1) }
        }
        await reporter.engine.synchronize()
        let files = fixture.batchFiles()
        let bytes = files.reduce(0) { total, name in
            total
                + ((try? FileManager.default.attributesOfItem(atPath: fixture.directory.file("v1/" + name)))?[.size]
                    as? Int ?? 0)
        }
        #expect(bytes <= 8 * 1024, "\(files.count) files, \(bytes) bytes")
        #expect(await flushed(reporter) == .delivered)
        let ids = stub.received.flatMap { $0.batch.events.compactMap(\.id) }
        let overflow = stub.received.reduce(0) { $0 + ($1.discarded["queue_overflow"] ?? 0) }
        #expect(overflow > 0 && ids.count + overflow == 80, "\(ids.count) sent, \(overflow) counted as dropped")
        #expect(ids == (80 - ids.count..<80).map { String(format: "e%02d", $0) }, "the newest are kept")
        #expect(stub.received.first?.discarded["queue_overflow"] == overflow, "the count rides on the first batch")
        await reporter.close()
    }

    @Test func overflowWhileRateLimitedCountsAsRateLimited() async throws {
        let stub = try StubCollector([StubCollector.error(429, retryAfter: "600")])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configuration.batching.maxEvents = 5
        configuration.storage.maxBytes = 6 * 1024
        let reporter = try FlowmeterReporter(configuration: configuration)
        reporter.record(ReporterFixture.event(id: "first", at: clock.now()))
        let flush = startFlush(reporter, timeout: 3_600)
        // The upload first: until it is in, the loop's wait toward the batch's seal deadline can still be counted
        // beside the flush's timeout. Then the loop's next sleeper is its wait for Retry-After.
        try #require(try await stub.waitForUploads(1), "the first attempt never arrived")
        _ = try await clock.sleepers(atLeast: 2)
        #expect(stub.received.count == 1)
        for index in 0..<60 { reporter.record(ReporterFixture.event(id: "later-\(index)", at: clock.now())) }
        // The oldest batch, the one the 429 held, is among those dropped to make room.
        #expect(await finished(flush) == .dropped)
        // Retry-After 600 plus the SDK's jitter (the fixture draws 1: a quarter more).
        clock.advance(by: 750)
        #expect(await flushed(reporter) == .delivered)
        let limited = stub.received.reduce(0) { $0 + ($1.discarded["rate_limited"] ?? 0) }
        let sent = Set(stub.received.dropFirst().flatMap { $0.batch.events.compactMap(\.id) })
        #expect(limited > 0 && sent.count + limited == 61, "\(sent.count) sent, \(limited) rate_limited")
        await reporter.close()
    }

    @Test func agesComeFromFileNamesNotFileTimestamps() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        do {
            let reporter = try FlowmeterReporter(
                configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
            reporter.record(ReporterFixture.event(id: "restored", at: clock.now()))
            await reporter.close()
        }
        // A backup restore stamps the file 30 days old: its name still says it is new, so it is sent.
        let file = try #require(fixture.batchFiles().first)
        var times = [timeval(tv_sec: 1_000, tv_usec: 0), timeval(tv_sec: 1_000, tv_usec: 0)]
        #expect(utimes(fixture.directory.file("v1/" + file), &times) == 0)
        do {
            let reporter = try FlowmeterReporter(
                configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
            #expect(await flushed(reporter) == .delivered)
            await reporter.close()
        }
        #expect(stub.received.flatMap { $0.batch.events.compactMap(\.id) } == ["restored"])

        // A batch whose name says eight days old is expired and counted, however new the file is.
        do {
            let reporter = try FlowmeterReporter(
                configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
            reporter.record(ReporterFixture.event(id: "stale", count: 2, at: clock.now()))
            await reporter.close()
        }
        let stale = try #require(fixture.batchFiles().first)
        var isOpen = false
        let name = try #require(BatchFileName(stale, isOpen: &isOpen))
        let old = BatchFileName(createdAt: name.createdAt - 8 * 86_400_000, id: name.id)
        #expect(rename(fixture.directory.file("v1/" + stale), fixture.directory.file("v1/" + old.sealedName)) == 0)
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        await reporter.engine.synchronize()
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.count == 2, "the stale batch is never sent")
        #expect(stub.received.last?.batch.events.isEmpty == true)
        #expect(stub.received.last?.discarded == ["expired": 2])
        await reporter.close()
    }

    @Test func uploadsArePacedAfterStartAndBetweenBatches() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let start = clock.now()
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configuration.batching.maxEvents = 1
        let reporter = try FlowmeterReporter(configuration: configuration)
        for index in 0..<3 { reporter.record(ReporterFixture.event(id: "p\(index)", at: clock.now())) }
        var sentAt: [TimeInterval] = []
        for expected in 1...3 {
            let deadline = try await clock.sleepers(atLeast: 1)[0]
            #expect(stub.received.count == expected - 1)
            sentAt.append(deadline.timeIntervalSince(start))
            clock.advance(to: deadline)
        }
        // Then the reporter sleeps with no deadline at all: idle costs no wake-ups.
        await reporter.engine.synchronize()
        #expect(await flushed(reporter) == .delivered)
        #expect(sentAt == [5, 10, 15])
        #expect(stub.received.map { $0.batch.events.compactMap(\.id) } == [["p0"], ["p1"], ["p2"]])
        await reporter.close()
    }

    @Test func theOpenBatchIsSealedAtTenSecondsAndThenSent() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let start = clock.now()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        reporter.record(ReporterFixture.event(id: "aged", at: clock.now()))
        let deadline = try await clock.sleepers(atLeast: 1)[0]
        #expect(deadline == start.addingTimeInterval(10))
        #expect(stub.received.isEmpty)
        clock.advance(to: deadline)
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.map { $0.batch.events.compactMap(\.id) } == [["aged"]])
        await reporter.close()
    }

    @Test func concurrentFlushesNeverSendABatchTwice() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        var configuration = fixture.configuration(endpoint: stub.endpoint)
        configuration.batching.maxEvents = 7
        let reporter = try FlowmeterReporter(configuration: configuration)
        let outcomes = await withTaskGroup(of: FlushOutcome.self) { group in
            for task in 0..<12 {
                group.addTask {
                    for index in 0..<25 {
                        reporter.record(
                            ReporterFixture.event(id: "t\(task)-\(index)", widgetType: "w\(index)", at: Date()))
                        if index % 5 == 4 { reporter.recordDecodes(1) }
                    }
                    return await flushed(reporter)
                }
                group.addTask { await flushed(reporter) }
            }
            var outcomes: [FlushOutcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.allSatisfy { $0 == .delivered }, "\(outcomes)")
        let batchIDs = stub.received.compactMap(\.batch.id)
        #expect(batchIDs.count == stub.received.count && Set(batchIDs).count == batchIDs.count, "no batch sent twice")
        let ids = stub.received.flatMap { $0.batch.events.compactMap(\.id) }
        #expect(ids.count == 300 && Set(ids).count == 300)
        await reporter.close()
    }

    @Test func clearAllDeletesEverythingQueued() async throws {
        let stub = try StubCollector([StubCollector.error(503, retryAfter: "600")])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configuration.batching.maxEvents = 3
        configuration.batching.maxEventsPerDecode = 2
        let reporter = try FlowmeterReporter(configuration: configuration)
        for index in 0..<10 { reporter.record(ReporterFixture.event(id: "gone-\(index)", at: clock.now())) }
        await reporter.engine.synchronize()
        #expect(!fixture.batchFiles().isEmpty)
        reporter.clearAll()
        #expect(fixture.batchFiles().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.file("v1/discarded.json")))
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.isEmpty)
        await reporter.close()
    }

    @Test func aReporterReleasedWithoutCloseLeavesItsEventsForTheNextOne() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        do {
            var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
            configuration.uploads.initialDelay = 86_400
            let reporter = try FlowmeterReporter(configuration: configuration)
            for index in 0..<12 { reporter.record(ReporterFixture.event(id: "left-\(index)", at: clock.now())) }
            await reporter.engine.synchronize()
        }
        #expect(fixture.batchFiles().count == 1)
        let next = try FlowmeterReporter(configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        #expect(await flushed(next) == .delivered)
        #expect(stub.received.flatMap { $0.batch.events.compactMap(\.id) } == (0..<12).map { "left-\($0)" })
        await next.close()
    }

    @Test func printingAConfigurationShowsNeitherTheKeyNorTheInstallID() throws {
        let fixture = try ReporterFixture()
        let configuration = fixture.configuration(endpoint: URL(string: "https://d.example.com")!, key: "k-secret-42")
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [String(describing: configuration), String(reflecting: configuration), "\(configuration)", dumped] {
            #expect(!text.contains("k-secret-42"), "\(text)")
            #expect(!text.contains(ReporterFixture.client.installID!), "\(text)")
            #expect(text.contains("com.example.shop"))
        }
    }
}
