import Foundation
import Glibc

/// Runs `work`, a blocking call (a librdkafka flush, a consumer poll, a long SQLite transaction, a wait for a
/// thread to end), on a thread of its own named `name`, and resumes the caller with its result.
///
/// The cooperative pool has one thread per core: a blocking call there stalls every task behind it. An async path
/// that must wait for something blocking waits through this (or through a continuation its thread resumes, as
/// ``LoopThread/join()`` does), never in place.
public func onThread<Value: Sendable>(named name: String, _ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        startThread(named: name) { continuation.resume(returning: work()) }
    }
}

/// Like ``onThread(named:_:)``, for work that throws; the error is rethrown to the caller.
public func onThread<Value: Sendable>(
    named name: String, _ work: @escaping @Sendable () throws -> Value
) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        startThread(named: name) { continuation.resume(with: Result { try work() }) }
    }
}

/// Starts `body` on a thread of its own named `name`; returns at once. The one place a Flowmeter library starts a
/// thread: ``onThread(named:_:)`` and ``LoopThread`` come through here.
///
/// The kernel keeps 15 bytes of a thread's name (what `ps -L`, `top -H`, gdb and perf show, and
/// `/proc/PID/task/TID/comm`); longer names are cut there, so the names Flowmeter gives fit. Foundation's
/// `Thread.current.name` keeps the whole name.
public func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    // Set from inside: on Linux a thread starts with its creator's name, and Foundation applies a name set before
    // `start()` only to its own record, not to the kernel's.
    let thread = Thread {
        Thread.current.name = name
        nameCurrentThread(name)
        body()
    }
    thread.start()
}

/// Gives the calling thread `name` in the kernel, cut to the 15 bytes the kernel keeps (a longer name would be
/// refused whole).
func nameCurrentThread(_ name: String) {
    var bytes: [UInt8] = []
    for scalar in name.unicodeScalars {
        let encoded = Array(String(scalar).utf8)
        guard bytes.count + encoded.count <= 15 else { break }
        bytes += encoded
    }
    // Through /proc: Glibc's module does not export pthread_setname_np (a GNU extension), nor prctl (variadic).
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}
