import Synchronization

/// Recycles the record blocks of finished batches, so a batch of events costs no large allocation: glibc's malloc
/// consolidates its fast bins on every request past 1 KiB, and at thousands of batches a second that showed as a
/// tenth of the collector's CPU.
///
/// Blocks come in power-of-two sizes from 16 KiB to 256 KiB, at most ``bytesPerSize`` of each size kept (at least 16
/// blocks, 20 MiB in all); larger blocks are allocated and freed as usual. The budget is in bytes because the number
/// of blocks out at once follows the batches in flight: at 32 connections each waiting for its delivery, 32 blocks of
/// 64 KiB (a 50-event batch) are out, and a pool of 16 freed and allocated 16 of them per round, each free of a chunk
/// of 64 KiB or more making glibc consolidate its fast bins (0.8 % of the collector's CPU in a perf profile).
final class BlockPool: Sendable {
    /// The pool the collector's batches share.
    static let shared = BlockPool()

    /// The smallest pooled size, as a power of two.
    static let minimumShift = 14
    /// The largest pooled size, as a power of two.
    static let maximumShift = 18
    /// The bytes of blocks kept per size.
    static let bytesPerSize = 4 << 20

    /// Blocks kept of `size` bytes: the byte budget's worth, and at least 16.
    static func maxKept(ofSize size: Int) -> Int {
        max(16, bytesPerSize / size)
    }

    private struct Address: @unchecked Sendable {
        // @unchecked: a raw buffer nobody uses while it sits in the pool.
        let pointer: UnsafeMutableRawPointer
    }

    private let free = Mutex<[[Address]]>(Array(repeating: [], count: maximumShift - minimumShift + 1))

    /// The byte count a request for `bytes` is rounded up to (a pooled size, or `bytes` itself past the largest).
    static func roundedSize(_ bytes: Int) -> Int {
        let minimum = 1 << minimumShift
        guard bytes > minimum else { return minimum }
        guard bytes <= 1 << maximumShift else { return bytes }
        return 1 << (Int.bitWidth - (bytes - 1).leadingZeroBitCount)
    }

    /// A buffer of exactly `size` bytes (a size from ``roundedSize(_:)``).
    func take(size: Int) -> UnsafeMutableRawPointer {
        if let slot = Self.slot(for: size),
            let pooled = free.withLock({ $0[slot].popLast() })
        {
            return pooled.pointer
        }
        return .allocate(byteCount: size, alignment: 16)
    }

    /// Takes back a buffer from ``take(size:)``: kept for the next batch, or freed when its size is full.
    func give(_ pointer: UnsafeMutableRawPointer, size: Int) {
        if let slot = Self.slot(for: size) {
            let kept = free.withLock { lists -> Bool in
                guard lists[slot].count < Self.maxKept(ofSize: size) else { return false }
                lists[slot].append(Address(pointer: pointer))
                return true
            }
            if kept { return }
        }
        pointer.deallocate()
    }

    /// How many buffers the pool holds now.
    var count: Int {
        free.withLock { $0.reduce(0) { $0 + $1.count } }
    }

    private static func slot(for size: Int) -> Int? {
        guard size.nonzeroBitCount == 1 else { return nil }
        let shift = size.trailingZeroBitCount
        guard shift >= minimumShift && shift <= maximumShift else { return nil }
        return shift - minimumShift
    }
}
