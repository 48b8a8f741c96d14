import Synchronization

/// Request-body buffers handed back after their handler returned, for the next request: a batch's 13 KB body then
/// costs no allocation (and no consolidation of glibc's fast bins, which every allocation past 1 KiB triggers).
///
/// Keeps at most ``maxBuffers`` buffers of at most ``maxCapacity`` bytes each (4 MiB in all); bigger bodies are
/// allocated as before. A handler that keeps the body (a copy of the array) is never affected: the buffer handed
/// back is then a fresh one of the same capacity.
final class BodyBufferPool: Sendable {
    /// The largest buffer kept.
    static let maxCapacity = 64 << 10
    /// How many buffers are kept.
    static let maxBuffers = 64

    private let buffers = Mutex<[[UInt8]]>([])

    /// An empty buffer with room for `capacity` bytes.
    func take(capacity: Int) -> [UInt8] {
        var buffer = capacity <= Self.maxCapacity ? buffers.withLock { $0.popLast() } ?? [] : []
        buffer.reserveCapacity(capacity)
        return buffer
    }

    /// Takes back a buffer whose bytes nobody needs any more.
    func give(_ buffer: inout [UInt8]) {
        guard buffer.capacity > 0, buffer.capacity <= Self.maxCapacity else { return }
        buffer.removeAll(keepingCapacity: true)
        var kept = buffer
        buffer = []
        buffers.withLock { buffers in
            if buffers.count < Self.maxBuffers { buffers.append(kept) }
            kept = []
        }
    }

    /// How many buffers the pool holds now.
    var count: Int {
        buffers.withLock { $0.count }
    }
}
