import Dispatch
import FlowmeterModels
import Foundation

/// The machinery behind a ``FlowmeterReporter``: the state in its lock, the disk writer on a serial queue, and the
/// one upload loop.
///
/// Only the loop sends, one batch at a time, so concurrent flushes can never send a batch twice: they wait for the
/// loop. The writer applies ``DiskOperation``s in the order the state queued them.
final class ReporterEngine: Sendable {
    let configuration: ReporterConfiguration
    let clock: any ReporterClock
    let transport: any ReporterTransport
    private let state: Locked<ReporterState>
    private let store: BatchStore
    private let writer = DispatchQueue(label: "flowmeter.reporter.writer", qos: .utility)
    private let wakeup = Wakeup()
    private let loop = Locked<Task<Void, Never>?>(nil)
    private let currentSend = Locked<Task<UploadResponse, any Error>?>(nil)
    private let uploadURL: URL

    init(configuration: ReporterConfiguration) throws {
        var configuration = configuration
        if configuration.client.sdkVersion == nil { configuration.client.sdkVersion = FlowmeterReporter.sdkVersion }
        self.configuration = configuration
        clock = configuration.clock
        transport =
            configuration.transport ?? URLSessionTransport(allowsLowDataMode: configuration.allowsLowDataMode)
        uploadURL = configuration.endpoint.appendingPathComponent("v1").appendingPathComponent("diagnostics")
        store = try BatchStore(directory: configuration.directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let client = try encoder.encode(configuration.client)
        state = Locked(
            ReporterState(
                configuration: configuration, header: BatchFileFormat.header(clientJSON: Array(client)),
                start: ReporterTime(configuration.clock)))
        writer.setSpecific(key: Self.writerKey, value: ())
        // The first job of the writer, so no operation of this run can come before it.
        writer.async { [store, state, clock] in
            let recovered = store.recover()
            let effects = state.withLock { $0.adopt(recovered, now: ReporterTime(clock)) }
            self.handle(effects)
        }
        let task = Task { [self] in await runLoop() }
        loop.withLock { $0 = task }
    }

    // MARK: - Recording

    func record(_ event: DiagnosticEvent) {
        let event = event.limited
        let key = configuration.batching.aggregatesIdenticalEvents && event.id == nil ? AggregationKey(event) : nil
        // An event that can never merge is encoded before taking the lock.
        let line = key == nil ? ReporterState.line(for: event) : nil
        let now = ReporterTime(clock)
        handle(state.withLock { $0.record(event, key: key, line: line, now: now) })
    }

    func recordDecodes(_ count: Int) {
        let now = ReporterTime(clock)
        handle(state.withLock { $0.recordDecodes(count, now: now) })
    }

    // MARK: - Flush, close, clear

    func flush(timeout: TimeInterval) async -> FlushOutcome {
        let now = ReporterTime(clock)
        let (id, effects) = state.withLock { $0.beginFlush(now: now) }
        handle(effects)
        let deadline = now.uptime + max(0, timeout)
        let outcome = await withTaskGroup(of: FlushOutcome.self) { group in
            group.addTask { await self.waitForFlush(id) }
            group.addTask { [clock] in
                try? await clock.sleep(untilUptime: deadline)
                return .timedOut
            }
            let outcome = await group.next() ?? .timedOut
            group.cancelAll()
            handle(state.withLock { $0.abandonFlush(id) })
            return outcome
        }
        // The directory says what the outcome says: delivered batches are deleted when the flush returns.
        await synchronize()
        return outcome
    }

    private func waitForFlush(_ id: Int) async -> FlushOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                handle(state.withLock { $0.awaitFlush(id, continuation) })
            }
        } onCancel: {
            handle(state.withLock { $0.abandonFlush(id) })
        }
    }

    func close() async {
        let now = ReporterTime(clock)
        handle(state.withLock { $0.close(now: now) })
        cancelCurrentUpload()
        let task = loop.withLock { $0 }
        await task?.value
        await onWriter { $0.releaseLock() }
    }

    /// Closes without waiting for the network: what a reporter released without `close()` does. It waits for the
    /// disk writer (local writes, bounded by `storage.maxPendingWriteBytes`) so that the directory is free for the
    /// next reporter when it returns.
    func abandon() {
        let now = ReporterTime(clock)
        handle(state.withLock { $0.close(now: now) })
        cancelCurrentUpload()
        loop.withLock { $0 }?.cancel()
        if DispatchQueue.getSpecific(key: Self.writerKey) != nil {
            drain()
            store.releaseLock()
        } else {
            writer.sync {
                drain()
                store.releaseLock()
            }
        }
    }

    /// Marks the writer queue, so that ``abandon()`` called on it does not wait for itself.
    private static let writerKey = DispatchSpecificKey<Void>()

    func clearAll() {
        handle(state.withLock { $0.clearAll() })
        // Wait for the directory to be emptied, so nothing queued survives the call.
        writer.sync { drain() }
    }

    /// Cancels the upload in flight, if any; the batch is kept without penalty.
    func cancelCurrentUpload() {
        currentSend.withLock { $0 }?.cancel()
    }

    /// Seals the open batch now (the app is leaving the foreground) without starting a flush.
    func sealOpenBatch() async {
        // A flush with no time to wait seals and returns; the loop sends what it can under its usual pacing.
        _ = await flush(timeout: 0)
    }

    /// What the queue holds now, for tests and diagnostics: sealed batches and the counts not yet reported.
    func snapshot() -> (queued: [ReporterState.QueuedBatch], discards: DiscardCounts, isPaused: Bool) {
        state.withLock { ($0.queued, $0.discards, $0.isPaused) }
    }

    /// Waits until the writer has carried out everything queued so far.
    func synchronize() async {
        await onWriter { _ in }
    }

    // MARK: - Effects and the writer

    private func handle(_ effects: ReporterState.Effects) {
        if effects.scheduleWriter { writer.async { self.drain() } }
        if effects.wakeLoop { wakeup.signal() }
        for (continuation, outcome) in effects.finishedFlushes { continuation.resume(returning: outcome) }
    }

    /// Runs on the writer queue: carries out operations until none are waiting.
    private func drain() {
        while true {
            let operations = state.withLock { $0.takeOperations() }
            if operations.isEmpty { return }
            var lost = 0
            for operation in operations {
                lost += store.perform(operation)
                configuration.afterDiskOperation?(operation.summary)
            }
            if lost > 0 { handle(state.withLock { $0.writeFailed(occurrences: lost) }) }
        }
    }

    private func onWriter<Value: Sendable>(_ body: @escaping @Sendable (BatchStore) -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            writer.async { [store] in
                self.drain()
                continuation.resume(returning: body(store))
            }
        }
    }

    // MARK: - The upload loop

    private func runLoop() async {
        while true {
            let now = ReporterTime(clock)
            let (step, effects) = state.withLock { $0.nextStep(now: now) }
            handle(effects)
            switch step {
            case .stop:
                return
            case .wait(let deadline):
                if Task.isCancelled { return }
                await wakeup.wait(until: deadline, clock: clock)
            case .upload(let batch):
                if await configuration.conditions.allowsUpload() {
                    await upload(batch)
                } else {
                    let now = ReporterTime(clock)
                    handle(state.withLock { $0.holdForConditions(now: now) })
                }
            }
        }
    }

    private func upload(_ queued: ReporterState.QueuedBatch) async {
        let name = queued.name
        let bytes = await onWriter { store in store.read(name) }
        guard let read = bytes.flatMap(BatchFileFormat.parse) else {
            // Gone (the directory was emptied under the SDK) or without a header that reads back: nothing to send.
            let reason: DiscardReason = bytes == nil ? .sendError : .corrupt
            let now = ReporterTime(clock)
            handle(state.withLock { $0.complete(name, decision: .drop(reason), batch: nil, now: now, random: 0) })
            report(queued, status: nil, bodyBytes: 0, result: .dropped(reason: reason))
            return
        }
        // Damaged lines are left out of what is sent and counted once: the file is rewritten without them.
        let (stored, effects) = state.withLock { $0.readBack(name, batch: read) }
        handle(effects)
        var body = UploadBody.make(id: name.id, sentAt: Timestamp(clock.now()), batch: stored)
        var headers: [(name: String, value: String)] = [
            ("Authorization", "Bearer \(configuration.ingestKey)"), ("Content-Type", "application/json"),
        ]
        if configuration.uploads.usesGzip {
            body = GzipWriter.compress(body)
            headers.append(("Content-Encoding", "gzip"))
        }
        let request = UploadRequest(url: uploadURL, headers: headers, body: body)
        let send = Task { [transport] in try await transport.send(request) }
        currentSend.withLock { $0 = send }
        let response = try? await withTaskCancellationHandler {
            try await send.value
        } onCancel: {
            send.cancel()
        }
        currentSend.withLock { $0 = nil }
        let now = ReporterTime(clock)
        let decision = AnswerPolicy.decide(
            response, wasCancelled: send.isCancelled, now: now.wall, policy: configuration.uploads)
        let random = configuration.randomUnit()
        handle(state.withLock { $0.complete(name, decision: decision, batch: stored, now: now, random: random) })
        report(queued, status: response?.status, bodyBytes: body.count, result: result(of: decision, stored, now))
    }

    private func result(
        of decision: AnswerPolicy.Decision, _ stored: StoredBatch, _ now: ReporterTime
    ) -> UploadAttempt.Result {
        switch decision {
        case .delivered(let accepted, let dropped): return .delivered(accepted: accepted, dropped: dropped)
        case .wait(let seconds, _): return .retry(after: seconds)
        case .backOff, .cancelled:
            return .retry(after: max(0, (state.withLock { $0.retryUptime } ?? now.uptime) - now.uptime))
        case .split: return stored.events.count >= 2 ? .split : .dropped(reason: .payloadTooLarge)
        case .drop(let reason): return .dropped(reason: reason)
        case .dropAndPause: return .paused
        }
    }

    private func report(
        _ batch: ReporterState.QueuedBatch, status: Int?, bodyBytes: Int, result: UploadAttempt.Result
    ) {
        configuration.onUpload?(
            UploadAttempt(
                batchID: batch.name.id, status: status, events: batch.events, occurrences: batch.occurrences,
                bodyBytes: bodyBytes, result: result))
    }
}
