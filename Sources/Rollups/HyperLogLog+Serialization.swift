import Foundation

extension HyperLogLog {
    /// The current serialization version, the first byte of ``serialized()``.
    public static let serializationVersion: UInt8 = 1

    private static let sparseTag: UInt8 = 0
    private static let denseTag: UInt8 = 1

    /// The sketch as bytes: version (1), representation (0 sparse, 1 dense), precision (12), then for sparse a
    /// big-endian UInt16 entry count and 3 bytes per entry (register index big-endian, rank), for dense 4,096 ranks.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = [Self.serializationVersion]
        switch storage {
        case .sparse(let entries):
            bytes.reserveCapacity(5 + 3 * entries.count)
            bytes.append(Self.sparseTag)
            bytes.append(UInt8(Self.precision))
            bytes.append(UInt8(entries.count >> 8))
            bytes.append(UInt8(entries.count & 0xFF))
            for entry in entries {
                bytes.append(UInt8(truncatingIfNeeded: entry >> 16))
                bytes.append(UInt8(truncatingIfNeeded: entry >> 8))
                bytes.append(UInt8(truncatingIfNeeded: entry))
            }
        case .dense(let registers):
            bytes.reserveCapacity(3 + registers.count)
            bytes.append(Self.denseTag)
            bytes.append(UInt8(Self.precision))
            bytes.append(contentsOf: registers)
        }
        return bytes
    }

    /// Reads bytes written by ``serialized()``; throws ``RollupsError`` (`invalidSketch`) for an unknown version or
    /// precision, a wrong length, unsorted or out-of-range registers, or ranks above the maximum.
    public init(serialized bytes: some Collection<UInt8>) throws(RollupsError) {
        let bytes = Array(bytes)
        func invalid(_ why: String) -> RollupsError {
            RollupsError(.invalidSketch, "Invalid HyperLogLog: \(why)")
        }
        guard bytes.count >= 3 else { throw invalid("\(bytes.count) bytes") }
        guard bytes[0] == Self.serializationVersion else { throw invalid("unknown version \(bytes[0])") }
        guard bytes[2] == UInt8(Self.precision) else { throw invalid("precision \(bytes[2]), expected 12") }
        switch bytes[1] {
        case Self.sparseTag:
            guard bytes.count >= 5 else { throw invalid("truncated sparse header") }
            let count = Int(bytes[3]) << 8 | Int(bytes[4])
            guard bytes.count == 5 + 3 * count else {
                throw invalid("sparse length \(bytes.count) for \(count) entries")
            }
            var entries: [UInt32] = []
            entries.reserveCapacity(count)
            var previous = -1
            for entry in 0..<count {
                let offset = 5 + 3 * entry
                let index = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                let rank = bytes[offset + 2]
                guard index > previous, index < Self.registerCount else {
                    throw invalid("register \(index) out of order")
                }
                guard rank >= 1, Int(rank) <= Self.maxRank else { throw invalid("rank \(rank)") }
                previous = index
                entries.append(UInt32(index) << 8 | UInt32(rank))
            }
            storage = entries.count > Self.sparseLimit ? .dense(Self.densify(entries)) : .sparse(entries)
        case Self.denseTag:
            guard bytes.count == 3 + Self.registerCount else { throw invalid("dense length \(bytes.count)") }
            let registers = Array(bytes[3...])
            guard registers.allSatisfy({ Int($0) <= Self.maxRank }) else { throw invalid("rank above \(Self.maxRank)") }
            let setCount = registers.reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
            if setCount > Self.sparseLimit {
                storage = .dense(registers)
            } else {
                // Keep the representation a function of the registers, so equal sketches compare equal.
                var entries: [UInt32] = []
                for (index, rank) in registers.enumerated() where rank != 0 {
                    entries.append(UInt32(index) << 8 | UInt32(rank))
                }
                storage = .sparse(entries)
            }
        default:
            throw invalid("unknown representation \(bytes[1])")
        }
    }
}
