import Foundation

/// Runs blocking librdkafka calls (flush, consumer polls) on their own named thread, off the cooperative pool.
enum DedicatedThread {
    static func run<Value: Sendable>(name: String, _ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: work())
            }
            thread.name = name
            thread.start()
        }
    }

    static func run<Value: Sendable>(
        name: String,
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try work() })
            }
            thread.name = name
            thread.start()
        }
    }
}
