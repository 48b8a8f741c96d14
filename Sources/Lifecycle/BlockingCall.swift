import Foundation

/// Runs `work`, a blocking call (a librdkafka flush, a consumer poll, a long SQLite transaction), on a thread of
/// its own named `name`, and resumes the caller with its result.
///
/// The cooperative pool has one thread per core: a blocking C call there stalls every task behind it. This is the
/// one place a Flowmeter library starts such a thread.
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

/// Starts `body` on a long-lived thread of its own named `name` (a poll or flush loop that lives as long as its
/// service); returns at once.
public func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    // Set from inside: on Linux a thread starts with its creator's name, and Foundation applies a name set before
    // `start()` only to its own record, not to the kernel's, which top, gdb and perf show.
    let thread = Thread {
        Thread.current.name = name
        body()
    }
    thread.start()
}
