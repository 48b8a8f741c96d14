import Foundation
import Lifecycle
import Logging
import Synchronization

/// The collector's disk spool: an append-only log of Kafka messages in segment files, kept until Kafka has them.
///
/// Batches are appended by one writer thread (`spool-writer`) in groups: every batch waiting when the thread wakes is
/// written, then one `fdatasync` makes the group durable, and only then does each batch's completion hear where it
/// went. The replay reads records back in append order (``nextChunk(maxRecords:maxBytes:)``) and reports their
/// fate: ``acknowledge(_:)`` when a delivery report said persisted, ``requeue(_:)`` when it failed (the record is
/// read and handed out again first), ``deadLetter(_:error:)`` when Kafka refused it for good (it moves to the
/// dead-letter segment). A segment file is removed once every record in it is settled, and the directory synced.
/// A read that fails settles nothing: the reader backs off and reads the same records again.
///
/// Bounded by `maxBytes`: a batch that would pass it is refused (`spoolFull`) at once. A failed write or sync fails
/// the whole group (`spoolWriteFailed`), cuts the segment back and marks the spool failed until a write succeeds
/// again; the writer probes every second while failed. At start the directory is locked (one collector per spool)
/// and every segment is scanned (``SpoolSegmentScan``): torn tails and damaged records are counted and skipped,
/// empty segments removed. Records of a batch still in flight when it was spooled (`inFlight`) are not handed to
/// the replay: their first delivery is still under way, and its report settles them.
///
/// No Kafka in here: the spool moves bytes; `SpoolingDelivery` and `SpoolReplayService` talk to the producer.
final class Spool: Sendable {
    /// Where the spool lives and how large it may grow.
    struct Configuration: Sendable, Hashable {
        /// The directory holding the segments and the lock file; made when missing.
        var directory: String
        /// The most bytes of segment files; default 1 GiB (`--spool-max-bytes`).
        var maxBytes: Int
        /// The size at which a segment is closed and a new one begun; default `maxBytes / 16`, from 64 KiB to 16 MiB.
        var segmentBytes: Int

        /// A configuration for `directory`.
        init(directory: String, maxBytes: Int = 1 << 30, segmentBytes: Int? = nil) {
            self.directory = directory
            self.maxBytes = maxBytes
            self.segmentBytes = segmentBytes ?? min(16 << 20, max(64 << 10, maxBytes / 16))
        }
    }

    /// Where a batch's (or a record's) frame starts: a segment and an offset in it.
    struct Location: Sendable, Hashable {
        /// The segment's number.
        var segment: UInt64
        /// The byte offset in the segment file.
        var offset: Int
    }

    /// Records read back for the replay: frames in `bytes`, their views, and where each came from.
    struct Chunk: Sendable {
        /// The frames read.
        var bytes: [UInt8]
        /// One view per record, indexing `bytes`.
        var records: [SpoolRecordView]
        /// Where each record lies in the spool, for ``acknowledge(_:)`` and ``requeue(_:)``.
        var locations: [Location]
    }

    /// What the spool holds now, for metrics and readiness.
    struct Status: Sendable, Hashable {
        /// Bytes of segment files.
        var bytes = 0
        /// Segment files.
        var segments = 0
        /// Records not yet settled (appended or recovered, not yet persisted by Kafka or dropped).
        var records = 0
        /// When the oldest segment still holding unsettled records began, in milliseconds since 1970.
        var oldestAppendedAt: Int64?
        /// Whether the last batch that asked was refused for room, and no room was freed since.
        var isFull = false
        /// Why the last write failed, while the spool has not written successfully since.
        var failure: String?
    }

    /// What the start-up scan found.
    struct Recovery: Sendable, Hashable {
        /// Segments kept for the replay.
        var segments = 0
        /// Valid records in them.
        var records = 0
        /// Torn tails counted and skipped (one per segment that had one).
        var tornTails = 0
        /// Damaged stretches between valid records, counted and skipped.
        var damagedRecords = 0
        /// Empty segments removed (created, but a crash came before any record was written).
        var emptySegments = 0
        /// Files without a segment header, renamed to `*.unreadable` and left for the operator.
        var unreadableSegments = 0
    }

    /// The configuration.
    let configuration: Configuration
    /// What the start-up scan found.
    let recovery: Recovery
    /// Where records Kafka refused for good are kept.
    let deadLetters: SpoolDeadLetters
    private let state: Mutex<State>
    private let writerFile = Mutex<WriterFile>(WriterFile())
    private let readFile = Mutex<ReadFile?>(nil)
    private let lockFile: Mutex<SpoolFile?>
    private let outstanding: Atomic<Int>
    /// The writer thread; woken for appends, settles and dead letters, and at close.
    private let writer = LoopThread(named: "spool-writer")
    /// Woken when there is something for the replay to read.
    private let activity = Wakeup()
    private let metrics: CollectorMetrics
    private let logger: Logger

    private static let lockName = "LOCK"
    private static let segmentSuffix = ".seg"

    /// Opens (making it when missing) and locks the spool directory, scans what it holds, and starts the writer.
    ///
    /// Throws `spoolUnavailable` when the directory cannot be made or read, or another process holds its lock.
    init(configuration: Configuration, metrics: CollectorMetrics, logger: Logger) throws(CollectorError) {
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        let directory = configuration.directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CollectorError(.spoolUnavailable, "cannot make the spool directory \(directory): \(error)")
        }
        let lock: SpoolFile
        do {
            lock = try SpoolFile.lock(directory + "/" + Self.lockName)
        } catch {
            throw CollectorError(.spoolUnavailable, error.message)
        }
        lockFile = Mutex(lock)
        deadLetters = SpoolDeadLetters(directory: directory)
        let (segments, recovery) = try Self.recover(directory: directory, logger: logger)
        self.recovery = recovery
        var initial = State()
        initial.segments = segments
        initial.nextSegmentID = (segments.last?.id ?? 0) + 1
        state = Mutex(initial)
        outstanding = Atomic(segments.reduce(0) { $0 + $1.unsettled })
        metrics.spoolDropped.labels("torn").increment(by: UInt64(recovery.tornTails))
        metrics.spoolDropped.labels("corrupt").increment(by: UInt64(recovery.damagedRecords))
        if recovery != Recovery() {
            logger.info(
                "spool recovered",
                [
                    "directory": directory, "segments": String(recovery.segments), "records": String(recovery.records),
                    "torn_tails": String(recovery.tornTails), "damaged_records": String(recovery.damagedRecords),
                    "empty_segments": String(recovery.emptySegments),
                    "unreadable_segments": String(recovery.unreadableSegments),
                ])
        }
        writer.start { [self] writer in runWriter(writer) }
    }

    // MARK: - Appending

    /// Appends `batch` durably and calls `completion` (on the writer thread) with where it starts, or at once with
    /// `spoolFull` when it does not fit, or later with `spoolWriteFailed`.
    ///
    /// The first `inFlight` records are still being delivered by their original send: the replay skips them, and
    /// the caller settles them from that send's reports.
    func append(
        _ batch: SpoolBatch, inFlight: Int = 0,
        completion: @escaping @Sendable (Result<Location, CollectorError>) -> Void
    ) {
        let size = batch.byteCount
        let refusal = state.withLock { state -> CollectorError? in
            if state.isClosed { return CollectorError(.spoolUnavailable, "the spool is closed") }
            if state.fileBytes + state.reservedBytes + size > configuration.maxBytes {
                state.isFull = true
                return CollectorError(
                    .spoolFull, "the spool holds \(state.fileBytes) of \(configuration.maxBytes) bytes")
            }
            state.isFull = false
            state.reservedBytes += size
            state.queue.append(Append(batch: batch, inFlight: min(inFlight, batch.count), completion: completion))
            outstanding.add(batch.count, ordering: .relaxed)
            return nil
        }
        if let refusal {
            completion(.failure(refusal))
            return
        }
        writer.wake()
    }

    /// Whether any record is waiting to be appended or settled: while it is, new batches go behind them.
    var isEngaged: Bool { outstanding.load(ordering: .relaxed) > 0 }

    /// Whether the last batch that asked was refused for room, and no room was freed since.
    var isFull: Bool { state.withLock(\.isFull) }

    /// What the spool holds now.
    var status: Status {
        state.withLock { state in
            var status = Status()
            status.bytes = state.fileBytes
            status.segments = state.segments.count
            status.records = outstanding.load(ordering: .relaxed)
            status.oldestAppendedAt = state.segments.first { $0.unsettled > 0 }?.firstAppendedAt
            status.isFull = state.isFull
            status.failure = state.failure?.message
            return status
        }
    }

    // MARK: - Replay

    /// Reads the next records to deliver: records whose delivery failed first, then the oldest records not handed
    /// out yet, at most `maxRecords` and about `maxBytes`. Nil when there is nothing to hand out.
    ///
    /// Call it from one thread (the replay's).
    func nextChunk(maxRecords: Int, maxBytes: Int) -> Chunk? {
        let plan = state.withLock { $0.planRead(maxRecords: maxRecords, maxBytes: maxBytes, now: .now) }
        switch plan {
        case nil:
            return nil
        case .retry(let locations):
            return read(locations)
        case .range(let segment, let range, let limit):
            return read(segment: segment, range: range, limit: limit, maxRecords: maxRecords)
        }
    }

    /// Settles records whose delivery report said persisted; `counts` maps segments to how many.
    func acknowledge(_ counts: [UInt64: Int]) {
        settle(counts)
    }

    /// Moves records Kafka refused for good (``KafkaError/isRefusedForGood``) to the dead-letter segment
    /// (``SpoolDeadLetters``) and settles them there; `error` is logged. When they cannot be read or the dead-letter
    /// segment cannot be written, they stay in the spool and go to the replay again: never dropped.
    ///
    /// Returns at once: the writer thread reads and writes the files (and syncs the directory), not the calling
    /// delivery report's thread, which serves every other report meanwhile. Records still waiting for it when the
    /// spool closes stay in the spool, are replayed at the next start and refused again.
    func deadLetter(_ locations: [Location], error: String) {
        guard !locations.isEmpty else { return }
        let queued = state.withLock { state in
            guard !state.isClosed else { return false }
            state.deadLetterQueue.append(DeadLetterRequest(locations: locations, error: error))
            return true
        }
        if queued { writer.wake() }
    }

    /// Moves records to the dead-letter segment, on the writer thread (``deadLetter(_:error:)``).
    private func moveToDeadLetters(_ locations: [Location], error: String) {
        guard !locations.isEmpty else { return }
        var frames: [UInt8] = []
        var counts: [UInt64: Int] = [:]
        var damaged: [UInt64: Int] = [:]
        do throws(CollectorError) {
            var files: [UInt64: SpoolFile] = [:]
            for location in locations {
                let file: SpoolFile
                if let open = files[location.segment] {
                    file = open
                } else {
                    file = try SpoolFile.openForReading(Self.path(of: location.segment, in: configuration.directory))
                    files[location.segment] = file
                }
                guard let frame = try Self.readFrame(at: location.offset, in: file) else {
                    damaged[location.segment, default: 0] += 1
                    continue
                }
                frames += frame
                counts[location.segment, default: 0] += 1
            }
            try deadLetters.append(frames)
        } catch {
            logger.error(
                "cannot move records Kafka refused to the dead-letter segment; they stay in the spool",
                ["error": error.message, "count": String(locations.count)])
            requeue(locations)
            return
        }
        let moved = counts.values.reduce(0, +)
        metrics.spoolDeadLettered.increment(by: UInt64(moved))
        if !damaged.isEmpty {
            metrics.spoolDropped.labels("corrupt").increment(by: UInt64(damaged.values.reduce(0, +)))
        }
        logger.error(
            "Kafka refused spooled records for good; they were moved to the dead-letter segment",
            ["count": String(moved), "path": deadLetters.path, "error": error])
        settle(counts.merging(damaged, uniquingKeysWith: +))
    }

    /// Hands records whose delivery failed to the replay again, before any other.
    func requeue(_ locations: [Location]) {
        guard !locations.isEmpty else { return }
        state.withLock { $0.retries.append(contentsOf: locations) }
        activity.wake()
    }

    /// Waits until something was appended or requeued, or `timeout` passed.
    func waitForActivity(timeout: Duration) {
        activity.wait(for: timeout)
    }

    /// Wakes a thread in ``waitForActivity(timeout:)`` (the replay, when a delivery freed room in its window).
    func signalActivity() {
        activity.wake()
    }

    /// Writes what is queued, stops the writer and releases the directory lock; later appends fail. Idempotent.
    func close() {
        let wasOpen = state.withLock { state in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard wasOpen else { return }
        writer.wake()
        writer.join(timeout: .seconds(30))
        readFile.withLock { $0 = nil }
        lockFile.withLock { $0 = nil }
    }

    // MARK: - Settling

    private func settle(_ counts: [UInt64: Int]) {
        let (removed, settled) = state.withLock { state -> ([String], Int) in
            guard !state.isClosed else { return ([], 0) }
            var settled = 0
            for (segment, count) in counts {
                guard let index = state.index(of: segment) else { continue }
                let taken = min(count, state.segments[index].unsettled)
                state.segments[index].settled += taken
                settled += taken
            }
            return (state.removeDone(), settled)
        }
        outstanding.subtract(settled, ordering: .relaxed)
        removeFiles(removed)
        // The writer retires the active segment once it is settled.
        writer.wake()
    }

    private func removeFiles(_ paths: [String]) {
        guard !paths.isEmpty else { return }
        for path in paths {
            do {
                try SpoolFile.remove(path)
            } catch {
                logger.warning("could not remove a settled spool segment", ["error": error.message])
            }
        }
        // Make the removal durable, so a crash cannot bring a settled segment back to be replayed again.
        do {
            try SpoolFile.synchronizeDirectory(configuration.directory)
        } catch {
            logger.warning("could not sync the spool directory", ["error": error.message])
        }
    }

    // MARK: - Reading

    private func file(for segment: UInt64) throws(CollectorError) -> SpoolFile {
        if let cached = readFile.withLock({ $0 }), cached.segment == segment { return cached.file }
        let path = Self.path(of: segment, in: configuration.directory)
        let file = try SpoolFile.openForReading(path)
        readFile.withLock { $0 = ReadFile(segment: segment, file: file) }
        return file
    }

    private func read(segment: UInt64, range: Range<Int>, limit: Int, maxRecords: Int) -> Chunk? {
        var bytes: [UInt8]
        do {
            bytes = try file(for: segment).read(at: range.lowerBound, count: range.count)
        } catch {
            readFailed(error)
            return nil
        }
        // A file shorter than what was synced: the bytes past its end are gone, and the frame they cut is damage.
        let isShort = bytes.count < range.count
        var records: [SpoolRecordView] = []
        var offset = 0
        var damaged = 0
        parsing: while offset < bytes.count && records.count < maxRecords {
            let readable = isShort ? bytes.count : limit - range.lowerBound
            let step = bytes.withUnsafeBytes { SpoolSegmentScan.step(in: $0, at: offset, limit: readable) }
            switch step {
            case .record(let record):
                records.append(record)
                offset = record.end
            case .needsBytes(let needed):
                // The rest is read next time, unless not even the first frame fit: then read exactly it.
                if offset > 0 { break parsing }
                do {
                    bytes = try file(for: segment).read(at: range.lowerBound, count: needed)
                } catch {
                    readFailed(error)
                    return nil
                }
                if bytes.count < needed {
                    damaged += 1
                    offset = limit - range.lowerBound
                    break parsing
                }
            case .damaged(let next):
                damaged += 1
                offset = next
            case .damagedToEnd:
                damaged += 1
                offset = limit - range.lowerBound
                break parsing
            }
        }
        if isShort && offset >= bytes.count { offset = limit - range.lowerBound }
        readSucceeded()
        let end = range.lowerBound + offset
        if damaged > 0 {
            metrics.spoolDropped.labels("corrupt").increment(by: UInt64(damaged))
            logger.error(
                "damaged records in a spool segment were skipped",
                ["segment": String(segment), "count": String(damaged)])
        }
        let finished = state.withLock { state in
            state.finishReading(segment: segment, at: end, records: records.count, damaged: damaged > 0)
        }
        if finished > 0 {
            outstanding.subtract(finished, ordering: .relaxed)
            writer.wake()
        }
        guard !records.isEmpty else { return nil }
        let locations = records.map { Location(segment: segment, offset: range.lowerBound + $0.start) }
        return Chunk(bytes: bytes, records: records, locations: locations)
    }

    private func read(_ locations: [Location]) -> Chunk? {
        var chunk = Chunk(bytes: [], records: [], locations: [])
        var unreadable: [UInt64: Int] = [:]
        for (index, location) in locations.enumerated() {
            let frame: [UInt8]?
            do {
                frame = try readFrame(at: location)
            } catch {
                // Not read, so not judged: this record and the rest go back to the front of the retries.
                state.withLock { $0.retries.insert(contentsOf: locations[index...], at: 0) }
                readFailed(error)
                return chunk.records.isEmpty ? nil : chunk
            }
            guard let frame else {
                unreadable[location.segment, default: 0] += 1
                continue
            }
            let base = chunk.bytes.count
            chunk.bytes += frame
            let decoded = chunk.bytes.withUnsafeBytes { SpoolFormat.frame(in: $0, at: base) }
            guard case .record(let record) = decoded else {
                chunk.bytes.removeSubrange(base...)
                unreadable[location.segment, default: 0] += 1
                continue
            }
            chunk.records.append(record)
            chunk.locations.append(location)
        }
        readSucceeded()
        if !unreadable.isEmpty {
            // Read once as valid records, damaged since: the disk changed under the spool.
            logger.error("spooled records could not be read again and are dropped", ["count": "\(unreadable.count)"])
            settle(unreadable)
            metrics.spoolDropped.labels("corrupt").increment(by: UInt64(unreadable.values.reduce(0, +)))
        }
        return chunk.records.isEmpty ? nil : chunk
    }

    /// The frame at `location`: nil when what lies there is no frame; throws when the file cannot be read.
    private func readFrame(at location: Location) throws(CollectorError) -> [UInt8]? {
        try Self.readFrame(at: location.offset, in: file(for: location.segment))
    }

    private static func readFrame(at offset: Int, in file: SpoolFile) throws(CollectorError) -> [UInt8]? {
        let header = try file.read(at: offset, count: SpoolFormat.frameHeaderSize)
        guard header.count == SpoolFormat.frameHeaderSize else { return nil }
        let length = header.withUnsafeBytes { Int(SpoolFormat.integer(UInt32.self, in: $0, at: 0)) }
        guard length <= SpoolFormat.maximumPayloadSize else { return nil }
        let frame = try file.read(at: offset, count: SpoolFormat.frameHeaderSize + length)
        let isRecord = frame.withUnsafeBytes { bytes in
            if case .record = SpoolFormat.frame(in: bytes, at: 0) { return true }
            return false
        }
        return isRecord ? frame : nil
    }

    /// A read failed (EACCES, EIO, EMFILE…): nothing is judged by it. The reader backs off (doubling from 100 ms to
    /// 10 s) and tries the same records again with a freshly opened file; the error is counted and logged once per
    /// streak.
    private func readFailed(_ error: CollectorError) {
        readFile.withLock { $0 = nil }
        metrics.spoolReadErrors.increment()
        let isFirst = state.withLock { $0.readFailed(at: .now) }
        if isFirst {
            logger.error(
                "cannot read the spool; its records are kept and the read is retried with backoff",
                ["directory": configuration.directory, "error": error.message])
        }
    }

    private func readSucceeded() {
        let recovered = state.withLock { state in
            defer { state.readBackoff = nil }
            return state.readBackoff != nil
        }
        if recovered { logger.info("the spool is readable again", ["directory": configuration.directory]) }
    }

    // MARK: - Writing (the writer thread)

    private func runWriter(_ writer: LoopThread) {
        while true {
            let step = state.withLock { $0.nextWriterStep(now: .now) }
            switch step {
            case .write(let appends):
                write(appends)
            case .retire(let segment):
                closeActive(expecting: segment)
            case .probe:
                probe()
            case .deadLetter(let requests):
                for request in requests { moveToDeadLetters(request.locations, error: request.error) }
            case .wait:
                writer.wait(for: .milliseconds(200))
            case .exit:
                closeActive(expecting: nil)
                return
            }
        }
    }

    private func write(_ appends: [Append]) {
        var appends = appends
        for index in appends.indices { appends[index].batch.sealChecksums() }
        let total = appends.reduce(0) { $0 + $1.batch.byteCount }
        let records = appends.reduce(0) { $0 + $1.batch.count }
        var start = 0
        var segment: UInt64 = 0
        do throws(CollectorError) {
            let file = try activeFile()
            (segment, start) = writerFile.withLock { ($0.segment, $0.size) }
            var locations: [Location] = []
            var offset = start
            for append in appends {
                try file.write(append.batch.block.bytes)
                locations.append(Location(segment: segment, offset: offset))
                offset += append.batch.byteCount
            }
            try file.synchronize()
            let end = offset
            writerFile.withLock { $0.size = end }
            let recovered = state.withLock { state in
                state.appended(appends, at: locations, segment: segment, end: end, reserved: total)
            }
            metrics.spoolAppended.increment(by: UInt64(records))
            if recovered { logger.info("the spool is writable again", ["directory": configuration.directory]) }
            for (append, location) in zip(appends, locations) { append.completion(.success(location)) }
            activity.wake()
        } catch {
            fail(appends, error: error, segment: segment, start: start, reserved: total, records: records)
        }
    }

    private func fail(
        _ appends: [Append], error: CollectorError, segment: UInt64, start: Int, reserved: Int, records: Int
    ) {
        // Cut back what this group wrote, so no answered-503 batch is left to replay, and never append to this
        // segment again: after a failed write its tail is not trusted.
        writerFile.withLock { file in
            if let open = file.file, file.segment == segment, start > 0 { try? open.truncate(to: start) }
        }
        let isNew = state.withLock { state in
            state.failed(error: error, reserved: reserved)
        }
        outstanding.subtract(records, ordering: .relaxed)
        closeActive(expecting: nil)
        metrics.spoolWriteErrors.increment()
        if isNew {
            logger.error(
                "cannot write the spool: batches that need it get 503 until a write succeeds",
                ["directory": configuration.directory, "error": error.message])
        }
        for append in appends { append.completion(.failure(error)) }
    }

    private func probe() {
        do {
            _ = try activeFile()
            let recovered = state.withLock { state in
                defer { state.failure = nil }
                return state.failure != nil
            }
            if recovered { logger.info("the spool is writable again", ["directory": configuration.directory]) }
        } catch {
            state.withLock { $0.failure = error }
        }
    }

    /// The open active segment, opening a new one when there is none or the current one is full.
    private func activeFile() throws(CollectorError) -> SpoolFile {
        let current = writerFile.withLock { $0 }
        if let file = current.file, current.size < configuration.segmentBytes { return file }
        if current.file != nil { closeActive(expecting: nil) }
        let segment = state.withLock { state in
            defer { state.nextSegmentID += 1 }
            return state.nextSegmentID
        }
        let path = Self.path(of: segment, in: configuration.directory)
        let file = try SpoolFile.create(path)
        do throws(CollectorError) {
            try file.write(SpoolFormat.segmentHeader)
            try file.synchronize()
            try SpoolFile.synchronizeDirectory(configuration.directory)
        } catch {
            try? SpoolFile.remove(path)
            throw error
        }
        state.withLock { state in
            state.segments.append(
                Segment(
                    id: segment, path: path, fileBytes: SpoolFormat.segmentHeaderSize,
                    readableEnd: SpoolFormat.segmentHeaderSize, records: 0, isActive: true))
        }
        writerFile.withLock { $0 = WriterFile(file: file, segment: segment, size: SpoolFormat.segmentHeaderSize) }
        return file
    }

    /// Closes the active segment's file (when it is `segment`, or whichever is open for nil), marks the segment
    /// closed, and removes it if every record in it is settled.
    private func closeActive(expecting segment: UInt64?) {
        let closed = writerFile.withLock { file -> UInt64? in
            guard file.file != nil, segment == nil || file.segment == segment else { return nil }
            defer { file = WriterFile() }
            return file.segment
        }
        let target = closed ?? segment
        let removed = state.withLock { state -> [String] in
            if let target, let index = state.index(of: target) { state.segments[index].isActive = false }
            return state.removeDone()
        }
        removeFiles(removed)
    }

    // MARK: - Recovery

    private static func recover(directory: String, logger: Logger) throws(CollectorError) -> ([Segment], Recovery) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw CollectorError(.spoolUnavailable, "cannot read the spool directory \(directory): \(error)")
        }
        var recovery = Recovery()
        var segments: [Segment] = []
        let numbered = names.compactMap { name -> (UInt64, String)? in
            guard name.hasSuffix(segmentSuffix), let id = UInt64(name.dropLast(segmentSuffix.count)),
                name == segmentName(id)
            else { return nil }
            return (id, directory + "/" + name)
        }.sorted { $0.0 < $1.0 }
        for (id, path) in numbered {
            let bytes: [UInt8]
            do {
                let file = try SpoolFile.openForReading(path)
                bytes = try file.read(at: 0, count: try file.size())
            } catch {
                throw CollectorError(.spoolUnavailable, "cannot read a spool segment: \(error.message)")
            }
            let scan = bytes.withUnsafeBytes { SpoolSegmentScan(scanning: $0) }
            if !scan.hasHeader && bytes.count >= SpoolFormat.segmentHeaderSize {
                recovery.unreadableSegments += 1
                logger.error("a spool file has no segment header; renamed and left alone", ["path": path])
                try? FileManager.default.moveItem(atPath: path, toPath: path + ".unreadable")
                continue
            }
            if scan.hasTornTail && scan.hasHeader { recovery.tornTails += 1 }
            recovery.damagedRecords += scan.damaged.count
            guard scan.records > 0 else {
                if scan.damaged.isEmpty && (!scan.hasTornTail || !scan.hasHeader) { recovery.emptySegments += 1 }
                try? SpoolFile.remove(path)
                continue
            }
            var segment = Segment(
                id: id, path: path, fileBytes: bytes.count, readableEnd: scan.validEnd, records: scan.records,
                isActive: false)
            segment.skips = scan.damaged
            segment.firstAppendedAt = scan.firstAppendedAt
            segments.append(segment)
            recovery.segments += 1
            recovery.records += scan.records
        }
        if recovery.emptySegments > 0 || recovery.unreadableSegments > 0 || segments.count < numbered.count {
            try? SpoolFile.synchronizeDirectory(directory)
        }
        return (segments, recovery)
    }

    private static func path(of segment: UInt64, in directory: String) -> String {
        directory + "/" + segmentName(segment)
    }

    /// `00000000000000000042.seg`: twenty digits, so names sort as numbers.
    static func segmentName(_ segment: UInt64) -> String {
        let digits = String(segment)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + segmentSuffix
    }
}

extension Spool {
    /// One segment's bookkeeping.
    fileprivate struct Segment: Sendable {
        let id: UInt64
        let path: String
        /// Bytes of the file.
        var fileBytes: Int
        /// Records can be read up to here: the end of the last synced group, or of the last valid record found.
        var readableEnd: Int
        /// Valid records in the segment.
        var records: Int
        /// Records persisted by Kafka or dropped.
        var settled = 0
        /// Records handed out by the reader or still in flight from their original send.
        var dispatched = 0
        /// The reader's position.
        var readOffset = SpoolFormat.segmentHeaderSize
        /// Byte ranges the reader jumps: damaged stretches, and batches still in flight from their original send.
        var skips: [Range<Int>] = []
        var firstAppendedAt: Int64?
        /// Whether the writer may still append to it.
        var isActive: Bool

        init(id: UInt64, path: String, fileBytes: Int, readableEnd: Int, records: Int, isActive: Bool) {
            self.id = id
            self.path = path
            self.fileBytes = fileBytes
            self.readableEnd = readableEnd
            self.records = records
            self.isActive = isActive
        }

        var unsettled: Int { max(0, records - settled) }
        var isDone: Bool { !isActive && settled >= records }
    }

    /// A batch waiting for the writer.
    fileprivate struct Append: Sendable {
        var batch: SpoolBatch
        var inFlight: Int
        var completion: @Sendable (Result<Location, CollectorError>) -> Void
    }

    /// The writer's open segment.
    fileprivate struct WriterFile: @unchecked Sendable {
        // @unchecked: the file is only used by the writer thread.
        var file: SpoolFile?
        var segment: UInt64 = 0
        var size = 0
    }

    /// The reader's open segment.
    fileprivate struct ReadFile: @unchecked Sendable {
        // @unchecked: the file is only used by the replay thread.
        var segment: UInt64
        var file: SpoolFile
    }

    /// What the writer does next.
    fileprivate enum WriterStep {
        case write([Append])
        case retire(UInt64)
        case probe
        case deadLetter([DeadLetterRequest])
        case wait
        case exit
    }

    /// Records Kafka refused for good, waiting for the writer thread to move them.
    fileprivate struct DeadLetterRequest: Sendable {
        var locations: [Location]
        var error: String
    }

    /// What the reader reads next.
    fileprivate enum ReadPlan {
        /// Records whose delivery failed, again.
        case retry([Location])
        /// A byte range of a segment, within `limit` (a frame never extends past it).
        case range(segment: UInt64, range: Range<Int>, limit: Int)
    }

    /// Everything the spool's threads share, behind the mutex; methods return what to do next.
    fileprivate struct State: Sendable {
        var segments: [Segment] = []
        var nextSegmentID: UInt64 = 1
        var queue: [Append] = []
        var reservedBytes = 0
        var isFull = false
        var failure: CollectorError?
        var nextProbe: ContinuousClock.Instant = .now
        var retries: [Location] = []
        var deadLetterQueue: [DeadLetterRequest] = []
        var isClosed = false
        /// Set while reads fail: when the reader tries again, and the pause after that.
        var readBackoff: (until: ContinuousClock.Instant, delay: Duration)?

        /// Books a failed read; returns whether reads were succeeding until now.
        mutating func readFailed(at now: ContinuousClock.Instant) -> Bool {
            let delay = readBackoff.map { min($0.delay * 2, .seconds(10)) } ?? .milliseconds(100)
            defer { readBackoff = (now + delay, delay) }
            return readBackoff == nil
        }

        var fileBytes: Int { segments.reduce(0) { $0 + $1.fileBytes } }

        func index(of segment: UInt64) -> Int? {
            segments.firstIndex { $0.id == segment }
        }

        /// Removes settled, closed segments from the books; returns their paths to remove from disk.
        mutating func removeDone() -> [String] {
            let done = segments.filter(\.isDone).map(\.path)
            if !done.isEmpty {
                segments.removeAll(where: \.isDone)
                isFull = false
            }
            return done
        }

        mutating func nextWriterStep(now: ContinuousClock.Instant) -> WriterStep {
            if !queue.isEmpty {
                defer { queue = [] }
                return .write(queue)
            }
            if isClosed { return .exit }
            if !deadLetterQueue.isEmpty {
                defer { deadLetterQueue = [] }
                return .deadLetter(deadLetterQueue)
            }
            if let active = segments.firstIndex(where: \.isActive), segments[active].unsettled == 0 {
                return .retire(segments[active].id)
            }
            if failure != nil && now >= nextProbe {
                nextProbe = now + .seconds(1)
                return .probe
            }
            return .wait
        }

        /// Books a synced group; returns whether the spool had been failing until now.
        mutating func appended(
            _ appends: [Append], at locations: [Location], segment: UInt64, end: Int, reserved: Int
        ) -> Bool {
            reservedBytes -= reserved
            defer { failure = nil }
            guard let index = index(of: segment) else { return failure != nil }
            segments[index].fileBytes = end
            segments[index].readableEnd = end
            for (append, location) in zip(appends, locations) {
                segments[index].records += append.batch.count
                if segments[index].firstAppendedAt == nil { segments[index].firstAppendedAt = append.batch.appendedAt }
                if append.inFlight > 0 {
                    segments[index].dispatched += append.inFlight
                    let skipEnd = location.offset + append.batch.frameEnd(append.inFlight - 1)
                    segments[index].skips.append(location.offset..<skipEnd)
                }
            }
            return failure != nil
        }

        /// Books a failed group; returns whether the spool was healthy until now.
        mutating func failed(error: CollectorError, reserved: Int) -> Bool {
            reservedBytes -= reserved
            nextProbe = .now + .seconds(1)
            defer { failure = error }
            return failure == nil
        }

        mutating func planRead(maxRecords: Int, maxBytes: Int, now: ContinuousClock.Instant) -> ReadPlan? {
            if let readBackoff, now < readBackoff.until { return nil }
            if !retries.isEmpty {
                let taken = Array(retries.prefix(maxRecords))
                retries.removeFirst(taken.count)
                return .retry(taken)
            }
            for index in segments.indices {
                var segment = segments[index]
                while let skip = segment.skips.first, skip.lowerBound <= segment.readOffset {
                    segment.readOffset = max(segment.readOffset, skip.upperBound)
                    segment.skips.removeFirst()
                }
                segments[index] = segment
                guard segment.readOffset < segment.readableEnd else { continue }
                let limit = min(segment.readableEnd, segment.skips.first?.lowerBound ?? Int.max)
                let end = min(limit, segment.readOffset + maxBytes)
                return .range(segment: segment.id, range: segment.readOffset..<end, limit: limit)
            }
            return nil
        }

        /// Moves the reader of `segment` to `offset` after handing out `records`. After damage, once the reader is
        /// through a closed segment, records that will never be handed out stop counting; returns how many.
        mutating func finishReading(segment id: UInt64, at offset: Int, records: Int, damaged: Bool) -> Int {
            guard let index = index(of: id) else { return 0 }
            segments[index].readOffset = max(segments[index].readOffset, offset)
            segments[index].dispatched += records
            guard damaged || segments[index].readOffset >= segments[index].readableEnd else { return 0 }
            let segment = segments[index]
            guard !segment.isActive, segment.readOffset >= segment.readableEnd, segment.skips.isEmpty else { return 0 }
            let lost = segment.records - segment.dispatched
            guard lost > 0 else { return 0 }
            segments[index].records = segment.dispatched
            return lost
        }
    }
}
