import FlowmeterModels
import Foundation
import TestSupport
import Testing

@testable import FlowmeterReporter

#if canImport(Glibc)
    import Glibc
#endif

/// The promises of issue 37 on the device: a client report never changes a batch already attempted, a damaged line
/// costs only itself, a split survives a kill between its steps, clock jumps neither stall nor expire the queue, one
/// reporter per directory, and the per-decode cap never cuts a repeat.
@Suite struct DevicePromiseTests {
    @Test func aClientReportRidesOnlyOnAFirstAttemptOrABatchOfItsOwn() async throws {
        let stub = try StubCollector([StubCollector.error(503, retryAfter: "30")])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configuration.batching.maxEventsPerDecode = 1
        let reporter = try FlowmeterReporter(configuration: configuration)
        reporter.record(ReporterFixture.event(id: "first", at: clock.now()))
        let firstFlush = startFlush(reporter)
        try #require(try await stub.waitForUploads(1), "the first attempt never arrived")
        // After the first attempt: the cap cuts one event, so a count waits to be reported, and nothing else is
        // queued that was not attempted.
        reporter.record(ReporterFixture.event(id: "cut", at: clock.now()))
        let secondFlush = startFlush(reporter)
        // The two flushes' timeouts and the loop waiting out Retry-After.
        let deadlines = try await clock.sleepers(atLeast: 3)
        clock.advance(to: deadlines[0])
        #expect(await finished(firstFlush) == .delivered)
        #expect(await finished(secondFlush) == .delivered)

        let uploads = stub.received
        try #require(uploads.count == 3, "\(uploads.map(\.discarded))")
        #expect(uploads[0].batch.id == uploads[1].batch.id, "the retry keeps its id")
        #expect(uploads[1].batch.events == uploads[0].batch.events)
        #expect(uploads[0].discarded.isEmpty && uploads[1].discarded.isEmpty, "the retry's body does not change")
        #expect(uploads[2].batch.id != uploads[0].batch.id)
        #expect(uploads[2].batch.events.isEmpty, "a batch of its own")
        #expect(uploads[2].discarded == ["cap_exceeded": 1])
        #expect(fixture.batchFiles().isEmpty)
        await reporter.close()
    }

    @Test func aDamagedLineIsDroppedAndCountedAndTheRestSent() async throws {
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        do {
            var configuration = fixture.configuration(endpoint: URL(string: "http://127.0.0.1:9")!, clock: clock)
            configuration.uploads.initialDelay = 86_400
            let reporter = try FlowmeterReporter(configuration: configuration)
            reporter.record(ReporterFixture.event(id: "kept-0", at: clock.now()))
            for _ in 0..<5 { reporter.record(ReporterFixture.event(widgetType: "damaged_widget", at: clock.now())) }
            reporter.record(ReporterFixture.event(id: "kept-1", at: clock.now()))
            reporter.recordDecodes(1)
            await reporter.close()
        }
        // A byte that is not UTF-8 in the merged event's line: its E line and its four C lines no longer read back.
        let file = fixture.directory.file("v1/" + (try #require(fixture.batchFiles().first)))
        var bytes = Array(try #require(FileManager.default.contents(atPath: file)))
        let marker = Array("damaged_widget".utf8)
        let at = try #require(
            (0...(bytes.count - marker.count)).first { Array(bytes[$0..<$0 + marker.count]) == marker })
        bytes[at] = 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let stub = try StubCollector([])
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        #expect(await flushed(reporter) == .delivered)
        let upload = try #require(stub.received.first)
        #expect(stub.received.count == 1)
        #expect(upload.batch.events.map(\.id) == ["kept-0", "kept-1"], "the rest of the batch is sent")
        #expect(upload.batch.decodes == 1)
        #expect(upload.discarded == ["corrupt": 5], "the damaged event's five occurrences, on the same first attempt")
        #expect(fixture.batchFiles().isEmpty)
        await reporter.close()
    }

    @Test func aBatchWhoseHeaderIsDamagedIsDroppedAsCorrupt() async throws {
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        do {
            var configuration = fixture.configuration(endpoint: URL(string: "http://127.0.0.1:9")!, clock: clock)
            configuration.uploads.initialDelay = 86_400
            let reporter = try FlowmeterReporter(configuration: configuration)
            reporter.record(ReporterFixture.event(id: "lost", count: 3, at: clock.now()))
            await reporter.close()
        }
        let file = fixture.directory.file("v1/" + (try #require(fixture.batchFiles().first)))
        var bytes = Array(try #require(FileManager.default.contents(atPath: file)))
        bytes[1] = UInt8(ascii: "[")
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let stub = try StubCollector([])
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        #expect(await flushed(reporter) == .dropped)
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.count == 1)
        #expect(stub.received.first?.batch.events.isEmpty == true)
        #expect(stub.received.first?.discarded == ["corrupt": 3])
        await reporter.close()
    }

    @Test func damagedLinesReadBackAsCorruptOccurrences() throws {
        var file = BatchFileFormat.header(clientJSON: Array(#"{"appID":"a"}"#.utf8))
        BatchFileFormat.appendEvent(ReporterFixture.event(id: "a", at: Date()), count: 2, to: &file)
        file += Array(#"E4 {"kind":"unknownType","widgetType":"trunc"#.utf8) + [10]  // not an object
        BatchFileFormat.appendIncrement(index: 1, count: 3, to: &file)  // of the damaged event
        BatchFileFormat.appendIncrement(index: 0, count: 1, to: &file)
        file += Array("C0 x\n".utf8)  // a count that is not a number
        file += [0x00, 0x13, 0x37, 10]  // not a line of any type
        file += Array("Znew-line-type 1\n".utf8)  // a newer SDK's line: ignored, not counted
        BatchFileFormat.appendEvent(ReporterFixture.event(id: "b", at: Date()), count: 1, to: &file)
        file += Array("E1 {\"id\":\"torn".utf8)  // the torn last line of a kill: ignored
        let batch = try #require(BatchFileFormat.parse(file))
        #expect(batch.events.map(\.count) == [3, 1])
        #expect(batch.corrupt == 4 + 3 + 1 + 1)
        #expect(!batch.isAttempted)
        #expect(JSONValidator.isObject(ArraySlice(batch.events[0].json)))
        #expect(!JSONValidator.isObject(ArraySlice(Array(#"{"a":"\ud800"}"#.utf8))), "a lone surrogate")
        #expect(!JSONValidator.isObject(ArraySlice(Array(#"{"a":1,}"#.utf8))))
        #expect(
            JSONValidator.isObject(ArraySlice(Array(#" {"a":[1,-2.5e3,true,null,{"b":"\u00e9\ud83d\ude00"}]} "#.utf8))))
    }

    /// A process killed by SIGKILL after writing one or both halves of a 413 split, before it removed the original:
    /// the next reporter sends every event exactly once, under the halves' ids or the original's, never both.
    @Test(arguments: [1, 2]) func aSplitInterruptedByAKillSendsEveryEventOnce(halves: Int) async throws {
        let fixture = try ReporterFixture()
        let bench = URL(fileURLWithPath: try FlowmeterExecutable.requiredPath()).deletingLastPathComponent()
            .appendingPathComponent("flowmeter-bench").path
        let child = try await ChildProcess.run(
            bench,
            [
                "reporter-split-probe", "--directory", fixture.directory.path, "--events", "6", "--halves",
                String(halves),
            ], timeout: .seconds(60))
        #expect(child.status == SIGKILL, "the probe died by SIGKILL: \(child.status) \(child.output) \(child.errors)")
        #expect(child.output.contains("killed after \(halves) of 2 halves"))
        let files = fixture.batchFiles()
        #expect(files.count == 1 + halves, "the original and the halves written: \(files)")
        let original = try #require(files.min { $0.count < $1.count })
        var isOpen = false
        let id = try #require(BatchFileName(original, isOpen: &isOpen)).id

        let stub = try StubCollector([])
        let reporter = try FlowmeterReporter(configuration: fixture.configuration(endpoint: stub.endpoint))
        #expect(await flushed(reporter) == .delivered)
        let sent = stub.received.flatMap { $0.batch.events.compactMap(\.id) }
        #expect(sent.sorted() == (0..<6).map { "split-\($0)" }.sorted(), "every event exactly once")
        let ids = stub.received.compactMap(\.batch.id)
        #expect(ids == (halves == 2 ? [id + "-a", id + "-b"] : [id]))
        #expect(fixture.batchFiles().isEmpty)
        await reporter.close()
    }

    @Test func pacingHoldsWhenTheWallClockIsSetBack() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        reporter.record(ReporterFixture.event(id: "paced", at: clock.now()))
        _ = try await clock.sleepers(atLeast: 1)
        clock.setWallClock(by: -86_400)
        let deadline = try await clock.sleepers(atLeast: 1)[0]
        #expect(deadline == clock.now().addingTimeInterval(10), "the seal is still due ten seconds after the record")
        clock.advance(to: deadline)
        // Closing while the upload is in flight would cancel it; wait for the answer first.
        #expect(try await stub.waitForUploads(1))
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.map { $0.batch.events.compactMap(\.id) } == [["paced"]])
        await reporter.close()
    }

    @Test func aDeviceThatBootedAt1970KeepsItsQueueWhenTheClockIsCorrected() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_000))
        do {
            var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
            configuration.uploads.initialDelay = 86_400
            let reporter = try FlowmeterReporter(configuration: configuration)
            reporter.record(ReporterFixture.event(id: "in-process", at: clock.now()))
            reporter.recordDecodes(1)
            // The network corrects the clock while the app runs, and again before the next launch.
            clock.setWallClock(by: Date().timeIntervalSince1970.rounded(.down) - 1_000)
            reporter.record(ReporterFixture.event(id: "after-correction", at: clock.now()))
            await reporter.close()
        }
        do {
            let reporter = try FlowmeterReporter(
                configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
            reporter.record(ReporterFixture.event(id: "next-launch", at: clock.now()))
            #expect(await flushed(reporter) == .delivered)
            await reporter.close()
        }
        #expect(
            stub.received.flatMap { $0.batch.events.compactMap(\.id) } == [
                "in-process", "after-correction", "next-launch",
            ])
        #expect(stub.received.allSatisfy { $0.discarded.isEmpty }, "nothing expired")
    }

    @Test func expiryCountsTheTimeThatPassedNotTheWallClock() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        var configuration = fixture.configuration(endpoint: stub.endpoint, clock: clock)
        configuration.uploads.initialDelay = 30 * 86_400
        let reporter = try FlowmeterReporter(configuration: configuration)
        // Set forward by thirty days: a batch recorded a second ago is not thirty days old.
        reporter.record(ReporterFixture.event(id: "fresh", at: clock.now()))
        clock.setWallClock(by: 30 * 86_400)
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.first?.batch.events.map(\.id) == ["fresh"])
        // Set back by thirty days, then eight days pass: the batch is eight days old, and the seven-day limit holds.
        reporter.record(ReporterFixture.event(id: "stale", count: 2, at: clock.now()))
        clock.setWallClock(by: -30 * 86_400)
        clock.advance(by: 8 * 86_400)
        // The upload loop wakes at the seal deadline, seals and finds the batch expired.
        #expect(await eventually { reporter.engine.snapshot().discards[.expired] == 2 })
        #expect(await flushed(reporter) == .delivered)
        #expect(stub.received.count == 2)
        #expect(stub.received.last?.batch.events.isEmpty == true)
        #expect(stub.received.last?.discarded == ["expired": 2])
        await reporter.close()
    }

    @Test func aSecondReporterOnTheDirectoryIsRefusedUntilTheFirstCloses() async throws {
        let fixture = try ReporterFixture()
        let configuration = fixture.configuration(endpoint: URL(string: "http://127.0.0.1:9")!, clock: ManualClock())
        let first = try FlowmeterReporter(configuration: configuration)
        let error = #expect(throws: ReporterError.self) { try FlowmeterReporter(configuration: configuration) }
        #expect(error?.code == .directoryInUse)
        #expect(error?.isRetriable == true)
        #expect(error?.message.contains("one reporter per directory") == true, "\(String(describing: error))")
        await first.close()
        let next = try FlowmeterReporter(configuration: configuration)
        await next.close()
    }

    @Test func identicalEventsMergePastThePerDecodeCap() async throws {
        let stub = try StubCollector([])
        let fixture = try ReporterFixture()
        let clock = ManualClock()
        let reporter = try FlowmeterReporter(
            configuration: fixture.configuration(endpoint: stub.endpoint, clock: clock))
        // One page decode: 250 identical events, 120 distinct ones, then 100 more of the first.
        for _ in 0..<250 { reporter.record(ReporterFixture.event(at: clock.now())) }
        for index in 0..<120 { reporter.record(ReporterFixture.event(id: "distinct-\(index)", at: clock.now())) }
        for _ in 0..<100 { reporter.record(ReporterFixture.event(at: clock.now())) }
        reporter.recordDecodes(1)
        #expect(await flushed(reporter) == .delivered)
        let upload = try #require(stub.received.first)
        #expect(upload.batch.events.first?.count == 350, "a flood of one diagnostic keeps its size")
        #expect(upload.batch.events.count == 100, "the cap limits distinct entries: the merged one and 99 others")
        #expect(upload.discarded == ["cap_exceeded": 21])
        await reporter.close()
    }
}
