/// The bytes of one batch's records in one allocation that never moves once records are sent from it, so the
/// producer reads keys and values in place (librdkafka without `RD_KAFKA_MSG_F_COPY`) and the spool writes the same
/// bytes to disk.
///
/// Written by one thread while the batch is built; from the first send on nobody writes the bytes a message points
/// at. ``SpoolBatch`` copies the block before changing a shared one, so a block lent to the producer stays as it was
/// until the batch's last delivery report releases it.
final class RecordBlock: @unchecked Sendable {
    // @unchecked: `base`, `count` and `capacity` change only while one thread builds the batch (SpoolBatch copies a
    // shared block before writing); afterwards the block is read-only for every holder.
    private(set) var base: UnsafeMutableRawPointer
    /// How many bytes are written.
    private(set) var count = 0
    private var capacity: Int

    /// An empty block with room for `capacity` bytes, its memory from ``BlockPool``.
    init(capacity: Int = 0) {
        self.capacity = BlockPool.roundedSize(capacity)
        self.base = BlockPool.shared.take(size: self.capacity)
    }

    deinit {
        BlockPool.shared.give(base, size: capacity)
    }

    /// The written bytes.
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: count)
    }

    /// The written bytes in `range`.
    func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "RecordBlock: range past the end")
        return UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    /// A copy of the written bytes, in a block of its own.
    func copy() -> RecordBlock {
        let copy = RecordBlock(capacity: capacity)
        copy.base.copyMemory(from: base, byteCount: count)
        copy.count = count
        return copy
    }

    /// Makes room for `extra` more bytes, doubling the capacity as needed.
    func reserve(_ extra: Int) {
        let needed = count + extra
        guard needed > capacity else { return }
        let grown = BlockPool.roundedSize(max(needed, capacity * 2))
        let moved = BlockPool.shared.take(size: grown)
        moved.copyMemory(from: base, byteCount: count)
        BlockPool.shared.give(base, size: capacity)
        base = moved
        capacity = grown
    }

    /// Lets `write` fill at most `bound` bytes at the end and keeps the length it returns.
    func append(upTo bound: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) {
        reserve(bound)
        let written = write(UnsafeMutableRawBufferPointer(start: base + count, count: bound))
        precondition(written >= 0 && written <= bound, "RecordBlock: wrote past the reserved bytes")
        count += written
    }

    /// Stores `value` little-endian at `offset`, inside the written bytes.
    func store<Integer: FixedWidthInteger>(littleEndian value: Integer, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<Integer>.size <= count, "RecordBlock: store past the end")
        (base + offset).storeBytes(of: value.littleEndian, as: Integer.self)
    }
}
