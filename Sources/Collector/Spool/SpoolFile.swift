import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One open file of the spool (a segment, or the directory lock), with the few POSIX calls the spool makes.
///
/// Errors name the call, the path and `strerror(errno)`, so an operator reads `write …/00000003.seg: No space left
/// on device` in the log and in `/readyz`. Used by one thread at a time (the spool's writer, or its reader).
final class SpoolFile: @unchecked Sendable {
    /// The file's path.
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Creates a new file that must not exist yet, for writing.
    static func create(_ path: String) throws(CollectorError) -> SpoolFile {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("create", path) }
        return SpoolFile(path: path, descriptor: descriptor)
    }

    /// Opens an existing file for reading.
    static func openForReading(_ path: String) throws(CollectorError) -> SpoolFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open", path) }
        return SpoolFile(path: path, descriptor: descriptor)
    }

    /// Opens (creating) `path` read-only and takes an exclusive `flock` on it without waiting; throws when another
    /// process holds it. Read-only, so the lock alone never keeps a file system from being remounted read-only.
    static func lock(_ path: String) throws(CollectorError) -> SpoolFile {
        if access(path, F_OK) != 0 {
            let created = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            guard created >= 0 else { throw failure("create", path) }
            close(created)
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open", path) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK {
                throw CollectorError(
                    .spoolUnavailable, "another collector uses the spool directory (\(path) is locked)")
            }
            throw failure("lock", path, code: code)
        }
        return SpoolFile(path: path, descriptor: descriptor)
    }

    /// Opens `path` for appending, creating it when missing.
    static func openForAppending(_ path: String) throws(CollectorError) -> SpoolFile {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("open", path) }
        return SpoolFile(path: path, descriptor: descriptor)
    }

    /// Takes an exclusive `flock` on the file, waiting for another holder; released when the file is closed.
    func lockExclusively() throws(CollectorError) {
        while flock(descriptor, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            throw Self.failure("lock", path)
        }
    }

    /// Whether the file is still the one its path names (not renamed or removed since it was opened).
    var isStillAtPath: Bool {
        var open = stat()
        var named = stat()
        guard fstat(descriptor, &open) == 0, stat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// Renames a file, replacing nothing that exists: throws when `destination` is taken.
    static func rename(_ source: String, to destination: String) throws(CollectorError) {
        guard access(destination, F_OK) != 0 else {
            throw CollectorError(.spoolWriteFailed, "rename \(source): \(destination) exists")
        }
        guard Glibc.rename(source, destination) == 0 else { throw failure("rename", source) }
    }

    /// Writes all of `bytes` at the end of what was written so far.
    func write(_ bytes: UnsafeRawBufferPointer) throws(CollectorError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", path)
            }
            offset += written
        }
    }

    /// Writes all of `bytes` at the end of what was written so far.
    func write(_ bytes: [UInt8]) throws(CollectorError) {
        // withUnsafeBytes rethrows untyped errors, so the typed one travels out in a Result.
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(CollectorError) in try write(buffer) }
        }
        try result.get()
    }

    /// Makes what was written durable (`fdatasync`).
    func synchronize() throws(CollectorError) {
        guard fdatasync(descriptor) == 0 else { throw Self.failure("fdatasync", path) }
    }

    /// Cuts the file back to `size` bytes and moves the write position there.
    func truncate(to size: Int) throws(CollectorError) {
        guard ftruncate(descriptor, off_t(size)) == 0, lseek(descriptor, off_t(size), SEEK_SET) >= 0 else {
            throw Self.failure("ftruncate", path)
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer at the end of the file.
    func read(at offset: Int, count: Int) throws(CollectorError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let read = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if read < 0 {
                if errno == EINTR { continue }
                throw Self.failure("read", path)
            }
            if read == 0 { break }
            filled += read
        }
        if filled < count { bytes.removeSubrange(filled...) }
        return bytes
    }

    /// The file's size.
    func size() throws(CollectorError) -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.failure("fstat", path) }
        return Int(status.st_size)
    }

    /// Makes a directory's entries durable (after creating or removing a file in it); ignores failures of
    /// file systems that cannot sync a directory.
    static func synchronizeDirectory(_ path: String) throws(CollectorError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { close(descriptor) }
        if fsync(descriptor) != 0 && errno != EINVAL && errno != EROFS {
            throw failure("fsync", path)
        }
    }

    /// Removes a file; a file already gone is not an error.
    static func remove(_ path: String) throws(CollectorError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw failure("unlink", path) }
    }

    /// An error naming the call, the path and the reason.
    static func failure(_ call: String, _ path: String, code: Int32 = errno) -> CollectorError {
        CollectorError(.spoolWriteFailed, "\(call) \(path): \(String(cString: strerror(code)))")
    }
}
