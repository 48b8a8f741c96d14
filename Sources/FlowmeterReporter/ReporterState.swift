import FlowmeterModels
import Foundation

/// Everything a reporter decides, as a value: the open batch, the queue of sealed ones, the counts not yet
/// reported, upload pacing and backoff, and the waiting flushes.
///
/// It lives in a lock; its methods never do I/O. They queue ``DiskOperation``s for the writer and return
/// ``Effects`` saying what the caller must do once the lock is released.
struct ReporterState {
    /// What the caller does after a transition, outside the lock.
    struct Effects {
        /// Start the writer: operations are waiting and no writer run is scheduled.
        var scheduleWriter = false
        /// Wake the upload loop: there is something new to decide.
        var wakeLoop = false
        /// Flushes that finished, with their outcome.
        var finishedFlushes: [(CheckedContinuation<FlushOutcome, Never>, FlushOutcome)] = []
    }

    /// The batch `record` appends to.
    struct OpenBatch {
        var name: BatchFileName
        /// The uptime it was opened at: its age for sealing, and its age in the queue.
        var openedAt: TimeInterval
        var keys: [AggregationKey: Int] = [:]
        var events = 0
        var occurrences = 0
        var bytes: Int
    }

    /// A sealed batch waiting on disk.
    struct QueuedBatch: Equatable, Sendable {
        var name: BatchFileName
        var bytes: Int
        var events: Int
        var occurrences: Int
        /// Order of sealing, for flushes: a flush waits for the batches sealed before it began.
        var sequence: Int
        /// The uptime its age counts from: when it was opened, or for a batch of an earlier run, its age by its
        /// name when it was found (a name the wall clock made implausible counts as new then).
        var bornAt: TimeInterval
        /// Whether an attempt has started; from then on its body never changes, so no client report joins it.
        var isAttempted = false
        /// The client report written into its file; counted again if the batch is dropped.
        var carried = DiscardCounts()
    }

    /// What the upload loop does next.
    enum Step: Equatable {
        case upload(QueuedBatch)
        /// Until this uptime, or until woken when nil.
        case wait(until: TimeInterval?)
        case stop
    }

    struct FlushWaiter {
        /// The last sequence this flush waits for; nil until the batches of earlier runs are known.
        var target: Int?
        /// How many drops were logged when it began.
        var dropMark: Int
        var continuation: CheckedContinuation<FlushOutcome, Never>?
        var outcome: FlushOutcome?
    }

    let batching: BatchPolicy
    let storage: StorageLimits
    let uploads: UploadPolicy
    let header: [UInt8]

    private(set) var open: OpenBatch?
    private(set) var queued: [QueuedBatch] = []
    private(set) var discards = DiscardCounts()
    private var discardsChanged = false
    private var nextSequence = 0
    /// The newest batch's creation time: a new batch is at least 1 ms newer, so names sort in creation order.
    private var lastCreatedAt: Int64 = 0
    private var eventsSinceDecode = 0

    private var operations: [DiskOperation] = []
    /// Lines for the open batch not yet handed to the writer, kept apart so appends grow one array in place.
    private var pendingAppend: (name: BatchFileName, bytes: [UInt8], occurrences: Int)?
    private(set) var pendingBytes = 0
    private var isWriterScheduled = false

    private(set) var isClosed = false
    private(set) var isRecovered = false
    private(set) var isPaused = false
    private var isRateLimited = false
    /// Uptimes: when the next attempt may start (`Retry-After`, backoff, conditions) and the next paced upload.
    private var notBefore: TimeInterval?
    private var nextPacedUpload: TimeInterval
    private var failures = 0
    private(set) var inFlight: BatchFileName?
    /// Whether the attempt in flight is its batch's first: until it is sent, its body may still take counts.
    private var isFirstAttemptInFlight = false
    /// The uptime the next attempt may start at (`Retry-After`, backoff or the upload conditions), nil when now.
    var retryUptime: TimeInterval? { notBefore }

    private var flushes: [Int: FlushWaiter] = [:]
    private var nextFlushID = 0
    /// Sequences of batches dropped rather than delivered, in order; `dropBase` entries were trimmed off the front.
    private var droppedSequences: [Int] = []
    private var dropBase = 0

    init(configuration: ReporterConfiguration, header: [UInt8], start: ReporterTime) {
        batching = configuration.batching
        storage = configuration.storage
        uploads = configuration.uploads
        self.header = header
        nextPacedUpload = start.uptime + configuration.uploads.initialDelay
    }

    // MARK: - Recording

    mutating func record(_ event: DiagnosticEvent, key: AggregationKey?, line: [UInt8]?, now: ReporterTime) -> Effects {
        guard !isClosed else { return Effects() }
        var effects = Effects()
        let count = event.count
        if pendingBytes > storage.maxPendingWriteBytes {
            discard(count, .queueOverflow)
            return finish(effects)
        }
        sealIfOld(now: now, effects: &effects)
        // A repeat merges whatever the caps say: they bound distinct entries (lines, keys), never counts.
        if let key, let index = open?.keys[key] {
            var increment: [UInt8] = []
            BatchFileFormat.appendIncrement(index: index, count: count, to: &increment)
            open!.occurrences += count
            append(increment, occurrences: count)
            return finish(effects)
        }
        eventsSinceDecode += 1
        if eventsSinceDecode > batching.maxEventsPerDecode {
            discard(count, .capExceeded)
            return finish(effects)
        }
        if key != nil, let open, open.keys.count >= batching.maxDistinctKeys {
            discard(count, .capExceeded)
            return finish(effects)
        }
        let line = line ?? Self.line(for: event)
        if let open, open.events > 0, open.bytes + line.count > batching.maxBytes {
            seal(now: now, effects: &effects)
        }
        openIfNeeded(now: now, effects: &effects)
        let index = open!.events
        open!.events += 1
        open!.occurrences += count
        if let key { open!.keys[key] = index }
        append(line, occurrences: count)
        if open!.events >= batching.maxEvents { seal(now: now, effects: &effects) }
        return finish(effects)
    }

    mutating func recordDecodes(_ count: Int, now: ReporterTime) -> Effects {
        guard !isClosed else { return Effects() }
        var effects = Effects()
        eventsSinceDecode = 0
        guard count > 0 else { return effects }
        sealIfOld(now: now, effects: &effects)
        openIfNeeded(now: now, effects: &effects)
        var line: [UInt8] = []
        BatchFileFormat.appendDecodes(count, to: &line)
        append(line, occurrences: 0)
        return finish(effects)
    }

    static func line(for event: DiagnosticEvent) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        BatchFileFormat.appendEvent(event, count: event.count, to: &line)
        return line
    }

    private mutating func openIfNeeded(now: ReporterTime, effects: inout Effects) {
        guard open == nil else { return }
        // Names never go back, even when the wall clock does, so they keep sorting in creation order.
        lastCreatedAt = max(Self.millis(now.wall), lastCreatedAt + 1)
        let name = BatchFileName(createdAt: lastCreatedAt, id: UUID().uuidString)
        open = OpenBatch(name: name, openedAt: now.uptime, bytes: header.count)
        enqueue(.create(name, header: header))
        effects.wakeLoop = true
    }

    private mutating func append(_ bytes: [UInt8], occurrences: Int) {
        guard let name = open?.name else { return }
        open!.bytes += bytes.count
        pendingBytes += bytes.count
        if pendingAppend?.name == name {
            pendingAppend!.bytes += bytes
            pendingAppend!.occurrences += occurrences
        } else {
            flushPendingAppend()
            pendingAppend = (name, bytes, occurrences)
        }
    }

    private mutating func flushPendingAppend() {
        if let pending = pendingAppend {
            operations.append(.append(pending.name, pending.bytes, occurrences: pending.occurrences))
            pendingAppend = nil
        }
    }

    private mutating func enqueue(_ operation: DiskOperation) {
        flushPendingAppend()
        operations.append(operation)
    }

    private mutating func discard(_ count: Int, _ reason: DiscardReason) {
        discards.add(count, for: reason)
        discardsChanged = true
    }

    // MARK: - Sealing and limits

    private mutating func sealIfOld(now: ReporterTime, effects: inout Effects) {
        if let open, now.uptime - open.openedAt >= batching.maxAge {
            seal(now: now, effects: &effects)
        }
    }

    /// Seals the open batch: it joins the queue.
    private mutating func seal(now: ReporterTime, effects: inout Effects) {
        guard let batch = open else { return }
        open = nil
        enqueue(.seal(batch.name))
        insert(
            QueuedBatch(
                name: batch.name, bytes: batch.bytes, events: batch.events, occurrences: batch.occurrences,
                sequence: nextSequence, bornAt: batch.openedAt))
        nextSequence += 1
        enforceLimits(now: now)
        effects.wakeLoop = true
    }

    private mutating func insert(_ batch: QueuedBatch) {
        let index = queued.firstIndex { batch.name < $0.name } ?? queued.endIndex
        queued.insert(batch, at: index)
    }

    /// Drops expired batches, then the oldest while over the byte limit; never the one in flight.
    private mutating func enforceLimits(now: ReporterTime) {
        var index = 0
        while index < queued.count {
            let batch = queued[index]
            if now.uptime - batch.bornAt > storage.maxAge && batch.name != inFlight {
                remove(at: index, reason: .expired)
            } else {
                index += 1
            }
        }
        var total = queued.reduce(open?.bytes ?? 0) { $0 + $1.bytes }
        index = 0
        while total > storage.maxBytes && index < queued.count {
            guard queued[index].name != inFlight else {
                index += 1
                continue
            }
            total -= queued[index].bytes
            remove(at: index, reason: isRateLimited ? .rateLimited : .queueOverflow)
        }
    }

    private mutating func remove(at index: Int, reason: DiscardReason) {
        let batch = queued.remove(at: index)
        discard(batch.occurrences, reason)
        if !batch.carried.isEmpty {
            discards.add(batch.carried)
        }
        logDrop(batch.sequence)
        enqueue(.delete(batch.name))
    }

    private mutating func logDrop(_ sequence: Int) {
        droppedSequences.append(sequence)
        if droppedSequences.count > 10_000 {
            droppedSequences.removeFirst(5_000)
            dropBase += 5_000
        }
    }

    // MARK: - Recovery

    /// Takes in what earlier runs left on disk.
    mutating func adopt(_ recovered: BatchStore.Recovered, now: ReporterTime) -> Effects {
        var effects = Effects()
        for batch in recovered.batches where !queued.contains(where: { $0.name == batch.name }) {
            insert(
                QueuedBatch(
                    name: batch.name, bytes: batch.bytes, events: batch.events, occurrences: batch.occurrences,
                    sequence: nextSequence, bornAt: now.uptime - Self.age(of: batch.name, at: now.wall),
                    isAttempted: batch.isAttempted, carried: batch.report))
            nextSequence += 1
        }
        if !recovered.discards.isEmpty {
            discards.add(recovered.discards)
            discardsChanged = true
        }
        isRecovered = true
        lastCreatedAt = max(lastCreatedAt, recovered.batches.map(\.name.createdAt).max() ?? 0)
        for id in flushes.keys where flushes[id]!.target == nil {
            flushes[id]!.target = nextSequence - 1
        }
        enforceLimits(now: now)
        effects.wakeLoop = true
        return finish(effects)
    }

    // MARK: - Uploading

    /// Decides the loop's next step at `now`.
    mutating func nextStep(now: ReporterTime) -> (Step, Effects) {
        var effects = Effects()
        guard !isClosed else { return (.stop, finish(effects)) }
        guard isRecovered else { return (.wait(until: nil), finish(effects)) }
        sealIfOld(now: now, effects: &effects)
        enforceLimits(now: now)
        effects.wakeLoop = false
        let sealDue = open.map { $0.openedAt + batching.maxAge }
        guard !isPaused, let first = queued.first else { return (.wait(until: sealDue), finish(effects)) }
        var due = notBefore ?? -.infinity
        if flushes.isEmpty { due = max(due, nextPacedUpload) }
        if now.uptime >= due {
            inFlight = first.name
            isFirstAttemptInFlight = !first.isAttempted
            if !first.isAttempted {
                // The counts not yet reported ride on a batch's first attempt only, written into its file with the
                // mark that it was attempted, so every retry carries the same body under the same id and the
                // collector, answering a retry from memory, has counted them once. An attempted batch takes none.
                var lines: [UInt8] = []
                if !discards.isEmpty {
                    let report = discards.take()
                    BatchFileFormat.appendReport(report, to: &lines)
                    discardsChanged = true
                    queued[0].carried.add(report)
                }
                BatchFileFormat.appendAttempted(to: &lines)
                enqueue(.markAttempted(first.name, lines))
                queued[0].bytes += lines.count
                queued[0].isAttempted = true
            }
            return (.upload(queued[0]), finish(effects))
        }
        return (.wait(until: sealDue.map { min($0, due) } ?? due), finish(effects))
    }

    /// The upload conditions say not now: look again later.
    mutating func holdForConditions(now: ReporterTime) -> Effects {
        inFlight = nil
        let recheck = now.uptime + uploads.conditionsRecheckInterval
        notBefore = max(notBefore ?? recheck, recheck)
        return finish(Effects())
    }

    /// Takes in what reading batch `name` back for its attempt found, and returns what to send: lines damaged on
    /// disk are left out and counted as `corrupt`, in the batch's own report on its first attempt (it has not been
    /// sent yet) and in the counts not yet reported otherwise, and the file is rewritten without them in one rename,
    /// so they are counted once and every later attempt sends the same body.
    mutating func readBack(_ name: BatchFileName, batch: StoredBatch) -> (StoredBatch, Effects) {
        guard batch.corrupt > 0 else { return (batch, Effects()) }
        var batch = batch
        let index = queued.firstIndex { $0.name == name }
        if let index, inFlight == name && isFirstAttemptInFlight {
            batch.report.add(batch.corrupt, for: .corrupt)
            queued[index].carried.add(batch.corrupt, for: .corrupt)
        } else {
            discard(batch.corrupt, .corrupt)
        }
        batch.corrupt = 0
        if let index {
            let bytes = BatchFileFormat.file(of: batch)
            enqueue(.write(name, bytes))
            queued[index].bytes = bytes.count
            queued[index].events = batch.events.count
            queued[index].occurrences = batch.occurrences
        }
        return (batch, finish(Effects()))
    }

    /// Applies the answer to the attempt on `name`; `batch` is what was read from its file (nil: unreadable).
    mutating func complete(
        _ name: BatchFileName, decision: AnswerPolicy.Decision, batch: StoredBatch?, now: ReporterTime,
        random: Double
    ) -> Effects {
        var effects = Effects()
        inFlight = nil
        isFirstAttemptInFlight = false
        // clearAll() may have removed it meanwhile.
        guard let index = queued.firstIndex(where: { $0.name == name }) else { return finish(effects) }
        let entry = queued[index]
        nextPacedUpload = now.uptime + uploads.minimumInterval
        switch decision {
        case .delivered:
            queued.remove(at: index)
            enqueue(.delete(name))
            failures = 0
            notBefore = nil
            isRateLimited = false
        case .wait(let seconds, let isRateLimit):
            // Never sooner than the server asked; up to a quarter later (at least a second), so apps told to come
            // back at the same moment do not.
            let jitter = random * max(1, seconds * uploads.retryAfterJitter)
            notBefore = now.uptime + seconds + jitter
            isRateLimited = isRateLimit
        case .backOff:
            failures += 1
            notBefore = now.uptime + AnswerPolicy.backoff(failures: failures, policy: uploads, random: random)
        case .cancelled:
            break
        case .split:
            guard let batch, batch.events.count >= 2 else {
                drop(at: index, reason: .payloadTooLarge)
                break
            }
            let (first, second) = batch.halves()
            queued.remove(at: index)
            for (half, suffix) in [(first, "a"), (second, "b")] {
                let bytes = BatchFileFormat.file(of: half)
                let halfName = name.half(suffix)
                enqueue(.write(halfName, bytes))
                insert(
                    QueuedBatch(
                        name: halfName, bytes: bytes.count, events: half.events.count,
                        occurrences: half.occurrences, sequence: entry.sequence, bornAt: entry.bornAt,
                        carried: half.report))
            }
            // Both halves are whole on disk before the original goes, and its removal is one unlink: a kill before
            // it leaves the original and whole halves, which BatchStore.recover settles (a half alone is removed,
            // both halves remove the original), so no event is ever sent under two ids.
            enqueue(.delete(name))
            // The halves are the same data: no pacing delay between the split and their first attempt.
            nextPacedUpload = now.uptime
        case .drop(let reason):
            drop(at: index, reason: reason)
        case .dropAndPause:
            drop(at: index, reason: .sendError)
            isPaused = true
        }
        effects.wakeLoop = false
        return finish(effects)
    }

    /// Drops a batch the collector refused; the client report it carried goes back to the counts not yet sent.
    private mutating func drop(at index: Int, reason: DiscardReason) {
        remove(at: index, reason: reason)
    }

    // MARK: - Flush, close, clear

    /// Starts a flush: seals the open batch (or, with nothing queued, an empty one to carry the counts not yet
    /// reported) and returns the flush's id.
    mutating func beginFlush(now: ReporterTime) -> (Int, Effects) {
        var effects = Effects()
        let id = nextFlushID
        nextFlushID += 1
        guard !isClosed else {
            flushes[id] = FlushWaiter(target: nil, dropMark: 0, outcome: .closed)
            return (id, effects)
        }
        // Taken first, so that a batch the limits drop as this flush seals counts against it.
        let dropMark = dropBase + droppedSequences.count
        seal(now: now, effects: &effects)
        // The counts not yet reported need a first attempt to ride on: with none queued, a batch of their own.
        if !discards.isEmpty && !queued.contains(where: { !$0.isAttempted }) {
            openIfNeeded(now: now, effects: &effects)
            seal(now: now, effects: &effects)
        }
        flushes[id] = FlushWaiter(target: isRecovered ? nextSequence - 1 : nil, dropMark: dropMark)
        effects.wakeLoop = true
        return (id, finish(effects))
    }

    /// Attaches the continuation of flush `id`; resumes it at once when the flush is already over.
    mutating func awaitFlush(_ id: Int, _ continuation: CheckedContinuation<FlushOutcome, Never>) -> Effects {
        guard var waiter = flushes[id] else {
            var effects = Effects()
            effects.finishedFlushes.append((continuation, .timedOut))
            return effects
        }
        if let outcome = waiter.outcome {
            flushes[id] = nil
            var effects = Effects()
            effects.finishedFlushes.append((continuation, outcome))
            return effects
        }
        waiter.continuation = continuation
        flushes[id] = waiter
        return finish(Effects())
    }

    /// Ends flush `id` as timed out (its timeout passed or its task was cancelled).
    mutating func abandonFlush(_ id: Int) -> Effects {
        var effects = Effects()
        if let waiter = flushes.removeValue(forKey: id), let continuation = waiter.continuation {
            effects.finishedFlushes.append((continuation, waiter.outcome ?? .timedOut))
        }
        return effects
    }

    /// Stops everything: seals the open batch (so the next run sends it first) and ends every flush as closed.
    mutating func close(now: ReporterTime) -> Effects {
        var effects = Effects()
        guard !isClosed else { return effects }
        seal(now: now, effects: &effects)
        isClosed = true
        effects.wakeLoop = true
        return finish(effects)
    }

    /// Forgets everything queued and every count, and has the writer empty the directory.
    mutating func clearAll() -> Effects {
        open = nil
        pendingAppend = nil
        operations = [.removeAll]
        pendingBytes = 0
        queued.removeAll()
        discards = DiscardCounts()
        discardsChanged = false
        eventsSinceDecode = 0
        var effects = Effects()
        effects.wakeLoop = true
        return finish(effects)
    }

    /// Counts occurrences the writer could not put on disk.
    mutating func writeFailed(occurrences: Int) -> Effects {
        discard(occurrences, .queueOverflow)
        return finish(Effects())
    }

    // MARK: - Writer

    /// Hands the waiting operations to the writer; marks the writer idle when there are none.
    mutating func takeOperations() -> [DiskOperation] {
        flushPendingAppend()
        let taken = operations
        operations = []
        pendingBytes = 0
        if taken.isEmpty { isWriterScheduled = false }
        return taken
    }

    // MARK: - Finishing a transition

    /// Saves changed counts, settles flushes, and says whether the writer must be started.
    private mutating func finish(_ effects: Effects) -> Effects {
        var effects = effects
        if discardsChanged {
            discardsChanged = false
            enqueue(.saveDiscards(discards))
        }
        if (!operations.isEmpty || pendingAppend != nil) && !isWriterScheduled {
            isWriterScheduled = true
            effects.scheduleWriter = true
        }
        settleFlushes(&effects)
        return effects
    }

    private mutating func settleFlushes(_ effects: inout Effects) {
        for (id, waiter) in flushes where waiter.outcome == nil {
            guard let outcome = outcome(of: waiter) else { continue }
            if let continuation = waiter.continuation {
                flushes[id] = nil
                effects.finishedFlushes.append((continuation, outcome))
            } else {
                flushes[id]!.outcome = outcome
            }
        }
    }

    private func outcome(of waiter: FlushWaiter) -> FlushOutcome? {
        if isClosed { return .closed }
        if isPaused { return .uploadsPaused }
        guard let target = waiter.target, !queued.contains(where: { $0.sequence <= target }) else { return nil }
        let start = max(0, waiter.dropMark - dropBase)
        let refused = droppedSequences[min(start, droppedSequences.count)...].contains { $0 <= target }
        return refused ? .dropped : .delivered
    }

    // MARK: - Time

    static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Names before this (2024-01-01) were written under a wall clock that was not set, such as a device that
    /// booted at 1970 before the network corrected it.
    static let earliestPlausibleName: Int64 = 1_704_067_200_000

    /// The age in seconds of a batch of an earlier run, by its name: 0 when the name is implausible (before
    /// ``earliestPlausibleName``, or ahead of the wall clock, which was set back since), so that a clock jump in
    /// either direction can neither expire a new batch nor keep an old one forever (it ages from now on).
    static func age(of name: BatchFileName, at wall: Date) -> TimeInterval {
        guard name.createdAt >= earliestPlausibleName else { return 0 }
        return max(0, Double(millis(wall) - name.createdAt) / 1000)
    }
}
