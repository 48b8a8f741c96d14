import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The queue directory: batch files and the file of counts not yet reported, behind a lock file that keeps a
/// second reporter out.
///
/// Not thread-safe: only the reporter's writer queue calls it. Writes go straight to the files with `write(2)`, so
/// what is written survives the process being killed (not power loss: there is no `fsync`, to spare the battery).
final class BatchStore: @unchecked Sendable {
    /// One batch file a scan found from earlier runs.
    struct RecoveredBatch: Sendable {
        var name: BatchFileName
        var bytes: Int
        var events: Int
        var occurrences: Int
        var report: DiscardCounts
        var isAttempted: Bool
    }

    /// What a scan found on disk from earlier runs.
    struct Recovered: Sendable {
        var batches: [RecoveredBatch]
        var discards: DiscardCounts
    }

    let folder: String
    private var openDescriptor: (name: BatchFileName, descriptor: Int32)?
    /// The lock file's descriptor, held with `flock` while the store may write; -1 once released.
    private var lockDescriptor: Int32
    private static let discardsFile = "discarded.json"
    /// Outside `v1`, so that clearing the queue never unlinks the file another process would then lock anew.
    static let lockFile = "reporter.lock"

    /// Creates the directory when missing and takes its lock; throws when it cannot be created, and
    /// ``ReporterError/Code/directoryInUse`` when another reporter (in this process or another) holds it.
    init(directory: URL) throws {
        folder = directory.appendingPathComponent("v1", isDirectory: true).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let lockPath = directory.appendingPathComponent(Self.lockFile).path
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ReporterError(.directoryUnavailable, "cannot open \(lockPath): errno \(errno)")
        }
        // flock, not fcntl: its lock belongs to the open file, so a second reporter in the same process is kept
        // out too, and it ends with the descriptor, also when the process is killed.
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK {
                throw ReporterError(
                    .directoryInUse,
                    "another reporter holds \(directory.path) (this process or another, such as an app extension); "
                        + "use one reporter per directory, or give each process its own directory")
            }
            throw ReporterError(.directoryUnavailable, "cannot lock \(lockPath): errno \(code)")
        }
        lockDescriptor = descriptor
    }

    deinit {
        closeOpenFile()
        releaseLock()
    }

    /// Closes the open file and gives up the directory: from now on ``perform(_:)`` does nothing, so a reporter
    /// started after this one is the only writer.
    func releaseLock() {
        closeOpenFile()
        guard lockDescriptor >= 0 else { return }
        close(lockDescriptor)
        lockDescriptor = -1
    }

    // MARK: - Operations

    /// Carries out `operation`; returns the occurrences it could not write (disk full, directory gone), which the
    /// caller counts as dropped.
    func perform(_ operation: DiskOperation) -> Int {
        guard lockDescriptor >= 0 else { return 0 }
        switch operation {
        case .create(let name, let header):
            closeOpenFile()
            let descriptor = open(path(name.openName), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { return 0 }
            openDescriptor = (name, descriptor)
            if !writeAll(descriptor, header) { closeOpenFile() }
        case .append(let name, let bytes, let occurrences):
            // After a failed write the file may end in a torn line; nothing more goes after it, so it stays the
            // last line and reading ignores it.
            guard let open = openDescriptor, open.name == name, writeAll(open.descriptor, bytes) else {
                closeOpenFile()
                return occurrences
            }
        case .seal(let name):
            if openDescriptor?.name == name { closeOpenFile() }
            _ = rename(path(name.openName), path(name.sealedName))
        case .markAttempted(let name, let lines):
            let descriptor = open(path(name.sealedName), O_WRONLY | O_APPEND | O_CLOEXEC)
            guard descriptor >= 0 else { return 0 }
            _ = writeAll(descriptor, lines)
            close(descriptor)
        case .write(let name, let bytes):
            let temporary = path(name.sealedName + ".tmp")
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { return 0 }
            let written = writeAll(descriptor, bytes)
            close(descriptor)
            if written {
                _ = rename(temporary, path(name.sealedName))
            } else {
                _ = unlink(temporary)
            }
        case .delete(let name):
            _ = unlink(path(name.sealedName))
        case .saveDiscards(let counts):
            if counts.isEmpty {
                _ = unlink(path(Self.discardsFile))
            } else if let data = try? JSONEncoder().encode(counts) {
                try? data.write(to: URL(fileURLWithPath: path(Self.discardsFile)), options: .atomic)
            }
        case .removeAll:
            closeOpenFile()
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                _ = unlink(path(name))
            }
        }
        return 0
    }

    /// The bytes of the sealed batch `name`, nil when it is gone.
    func read(_ name: BatchFileName) -> [UInt8]? {
        FileManager.default.contents(atPath: path(name.sealedName)).map { Array($0) }
    }

    /// Seals every open file a killed run left behind, removes half-written temporary files, settles a split a
    /// kill interrupted, and lists the sealed batches (oldest first) and the counts not yet reported.
    func recover() -> Recovered {
        var names: Set<BatchFileName> = []
        for file in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            if file.hasSuffix(".tmp") {
                _ = unlink(path(file))
                continue
            }
            var isOpen = false
            guard let name = BatchFileName(file, isOpen: &isOpen) else { continue }
            if isOpen {
                if openDescriptor?.name == name { continue }
                _ = rename(path(name.openName), path(name.sealedName))
            }
            names.insert(name)
        }
        // A split writes both halves whole, then unlinks the original. With the original still there, both halves
        // mean the split was done but for that unlink; one half alone means it was not, and the original is split
        // again into the same two ids when the collector answers 413 again. Either way no event goes out twice.
        for name in names.sorted() where names.contains(name) {
            let halves = [name.half("a"), name.half("b")].filter { names.contains($0) }
            if halves.count == 2 {
                _ = unlink(path(name.sealedName))
                names.remove(name)
            } else if let half = halves.first {
                _ = unlink(path(half.sealedName))
                names.remove(half)
            }
        }
        var batches: [RecoveredBatch] = []
        for name in names.sorted() {
            guard let bytes = read(name) else { continue }
            let batch = BatchFileFormat.parseLines(bytes).batch
            batches.append(
                RecoveredBatch(
                    name: name, bytes: bytes.count, events: batch.events.count, occurrences: batch.occurrences,
                    report: batch.report, isAttempted: batch.isAttempted))
        }
        var discards = DiscardCounts()
        if let data = FileManager.default.contents(atPath: path(Self.discardsFile)),
            let saved = try? JSONDecoder().decode(DiscardCounts.self, from: data)
        {
            discards = saved
        }
        return Recovered(batches: batches, discards: discards)
    }

    // MARK: - Files

    private func path(_ name: String) -> String { folder + "/" + name }

    private func closeOpenFile() {
        if let open = openDescriptor { close(open.descriptor) }
        openDescriptor = nil
    }

    /// Writes all of `bytes`; false when the system refused part of them.
    private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            // Bounded: every round writes at least one byte or gives up.
            while offset < raw.count {
                let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }
}
