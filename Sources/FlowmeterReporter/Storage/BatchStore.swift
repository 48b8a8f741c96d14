import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The queue directory: batch files and the file of counts not yet reported.
///
/// Not thread-safe: only the reporter's writer queue calls it. Writes go straight to the files with `write(2)`, so
/// what is written survives the process being killed (not power loss: there is no `fsync`, to spare the battery).
final class BatchStore: @unchecked Sendable {
    /// What a scan found on disk from earlier runs.
    struct Recovered: Sendable {
        var batches: [(name: BatchFileName, bytes: Int, events: Int, occurrences: Int, report: DiscardCounts)]
        var discards: DiscardCounts
    }

    let folder: String
    private var openDescriptor: (name: BatchFileName, descriptor: Int32)?
    private static let discardsFile = "discarded.json"

    /// Creates the directory when missing; throws when it cannot.
    init(directory: URL) throws {
        folder = directory.appendingPathComponent("v1", isDirectory: true).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit { closeOpenFile() }

    // MARK: - Operations

    /// Carries out `operation`; returns the occurrences it could not write (disk full, directory gone), which the
    /// caller counts as dropped.
    func perform(_ operation: DiskOperation) -> Int {
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
        case .attachReport(let name, let lines):
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

    /// Seals every open file a killed run left behind, removes half-written temporary files, and lists the sealed
    /// batches (oldest first) and the counts not yet reported.
    func recover() -> Recovered {
        var batches: [(name: BatchFileName, bytes: Int, events: Int, occurrences: Int, report: DiscardCounts)] = []
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
            guard let bytes = read(name) else { continue }
            let batch = BatchFileFormat.parse(bytes)
            batches.append(
                (name, bytes.count, batch?.events.count ?? 0, batch?.occurrences ?? 0, batch?.report ?? DiscardCounts())
            )
        }
        batches.sort { $0.name < $1.name }
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
