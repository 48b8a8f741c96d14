import Synchronization

/// A counter that the producer's poll thread can bump while the test reads it.
final class DeliveryCounter: Sendable {
    private let count = Atomic<Int>(0)

    func increment() { count.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
