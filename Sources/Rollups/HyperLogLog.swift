/// A HyperLogLog sketch of distinct installs: precision 12 (4,096 registers, standard error about 1.6%), 64-bit hashes.
///
/// Small sketches are sparse (sorted register/rank pairs, 4 bytes each in memory, 3 when serialized) and turn dense
/// (4,096 one-byte registers) once more than ``sparseLimit`` registers are set. The representation is a function of
/// the registers alone, so two sketches with the same registers are equal (`==`) however they were built.
/// ``merge(_:)`` is the register-wise maximum: associative, commutative and idempotent (A ∪ A = A), so a sketch
/// merged twice counts nobody twice.
public struct HyperLogLog: Sendable, Equatable {
    /// Bits of the hash that pick the register.
    public static let precision = 12
    /// The number of registers, `2^precision`.
    public static let registerCount = 1 << precision
    /// The most registers a sparse sketch holds before it turns dense.
    public static let sparseLimit = 512
    /// The relative standard error of ``estimate``, `1.04 / sqrt(registerCount)`.
    public static let standardError = 1.04 / Double(registerCount).squareRoot()

    /// The largest rank a register can hold: the leading zeros of the 52 bits past the index, plus one.
    static let maxRank = 64 - precision + 1

    enum Storage: Sendable, Equatable {
        /// Entries `index << 8 | rank`, sorted by index, one per set register.
        case sparse([UInt32])
        /// One rank per register.
        case dense([UInt8])
    }

    var storage: Storage

    /// An empty sketch.
    public init() {
        storage = .sparse([])
    }

    /// Whether nothing was ever inserted.
    public var isEmpty: Bool {
        if case .sparse(let entries) = storage { return entries.isEmpty }
        return false
    }

    /// Whether the sketch is in its dense representation.
    public var isDense: Bool {
        if case .dense = storage { return true }
        return false
    }

    /// Adds an install by its `installHash` (32 hex characters of HMAC-SHA-256): its first 16 hex digits are the
    /// 64-bit hash. Any other string is hashed with FNV-1a and a finalizer instead.
    public mutating func insert(installHash: String) {
        insert(hash: Self.hash(installHash: installHash))
    }

    /// Adds an element by its uniformly distributed 64-bit hash.
    public mutating func insert(hash: UInt64) {
        let index = Int(truncatingIfNeeded: hash >> UInt64(64 - Self.precision))
        let rank = UInt8(min((hash << UInt64(Self.precision)).leadingZeroBitCount, 64 - Self.precision) + 1)
        set(index: index, rank: rank)
    }

    /// Makes this sketch the union of itself and `other`.
    public mutating func merge(_ other: HyperLogLog) {
        switch (storage, other.storage) {
        case (_, .sparse(let theirs)) where theirs.isEmpty:
            return
        case (.sparse(let mine), .sparse(let theirs)):
            // Nothing new (the same installs again): the registers, and the array that holds them, stay as they are.
            if Self.covers(mine, theirs) { return }
            let merged = Self.mergeSparse(mine, theirs)
            storage = merged.count > Self.sparseLimit ? .dense(Self.densify(merged)) : .sparse(merged)
        case (.dense(var mine), .sparse(let theirs)):
            // Nothing new: no write, so a sketch that shares its registers with a copy does not copy them.
            guard let firstNew = theirs.firstIndex(where: { mine[Int($0 >> 8)] < UInt8(truncatingIfNeeded: $0) })
            else { return }
            storage = .sparse([])  // drop the reference so the array is mutated in place
            for entry in theirs[firstNew...] {
                let index = Int(entry >> 8)
                mine[index] = max(mine[index], UInt8(truncatingIfNeeded: entry))
            }
            storage = .dense(mine)
        case (.sparse(let mine), .dense(var theirs)):
            for entry in mine {
                let index = Int(entry >> 8)
                theirs[index] = max(theirs[index], UInt8(truncatingIfNeeded: entry))
            }
            storage = .dense(theirs)
        case (.dense(var mine), .dense(let theirs)):
            storage = .sparse([])
            for index in 0..<Self.registerCount where theirs[index] > mine[index] { mine[index] = theirs[index] }
            storage = .dense(mine)
        }
    }

    /// The union of this sketch and `other`.
    public func merging(_ other: HyperLogLog) -> HyperLogLog {
        var copy = self
        copy.merge(other)
        return copy
    }

    // MARK: - Registers

    mutating func set(index: Int, rank: UInt8) {
        switch storage {
        case .dense(var registers):
            guard registers[index] < rank else { return }
            storage = .sparse([])
            registers[index] = rank
            storage = .dense(registers)
        case .sparse(var entries):
            let key = UInt32(index) << 8
            var low = 0
            var high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle] & ~0xFF < key { low = middle + 1 } else { high = middle }
            }
            if low < entries.count, entries[low] & ~0xFF == key {
                guard UInt8(truncatingIfNeeded: entries[low]) < rank else { return }
                storage = .sparse([])
                entries[low] = key | UInt32(rank)
                storage = .sparse(entries)
                return
            }
            storage = .sparse([])
            entries.insert(key | UInt32(rank), at: low)
            storage = entries.count > Self.sparseLimit ? .dense(Self.densify(entries)) : .sparse(entries)
        }
    }

    /// Every register's rank, 0 for unset ones.
    var registers: [UInt8] {
        switch storage {
        case .dense(let registers): return registers
        case .sparse(let entries): return Self.densify(entries)
        }
    }

    static func densify(_ entries: [UInt32]) -> [UInt8] {
        var registers = [UInt8](repeating: 0, count: registerCount)
        for entry in entries { registers[Int(entry >> 8)] = UInt8(truncatingIfNeeded: entry) }
        return registers
    }

    /// Whether every register set in `rhs` is set in `lhs` to at least its rank (both sparse entries, sorted).
    static func covers(_ lhs: [UInt32], _ rhs: [UInt32]) -> Bool {
        guard rhs.count <= lhs.count else { return false }
        var left = 0
        for entry in rhs {
            let index = entry >> 8
            while left < lhs.count, lhs[left] >> 8 < index { left += 1 }
            guard left < lhs.count, lhs[left] >> 8 == index, lhs[left] >= entry else { return false }
            left += 1
        }
        return true
    }

    static func mergeSparse(_ lhs: [UInt32], _ rhs: [UInt32]) -> [UInt32] {
        var merged: [UInt32] = []
        merged.reserveCapacity(lhs.count + rhs.count)
        var left = 0
        var right = 0
        while left < lhs.count && right < rhs.count {
            let leftIndex = lhs[left] >> 8
            let rightIndex = rhs[right] >> 8
            if leftIndex < rightIndex {
                merged.append(lhs[left])
                left += 1
            } else if rightIndex < leftIndex {
                merged.append(rhs[right])
                right += 1
            } else {
                merged.append(max(lhs[left], rhs[right]))
                left += 1
                right += 1
            }
        }
        merged.append(contentsOf: lhs[left...])
        merged.append(contentsOf: rhs[right...])
        return merged
    }

    // MARK: - Hashing

    /// The 64-bit hash of an `installHash`: its first 16 hex digits, or FNV-1a with a finalizer when it has fewer.
    public static func hash(installHash: String) -> UInt64 {
        var value: UInt64 = 0
        var digits = 0
        for byte in installHash.utf8 {
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 97...102: digit = byte - 87
            case 65...70: digit = byte - 55
            default: return hash(string: installHash)
            }
            value = value << 4 | UInt64(digit)
            digits += 1
            if digits == 16 { return value }
        }
        return hash(string: installHash)
    }

    /// A 64-bit hash of any string: FNV-1a over its UTF-8 bytes, then the MurmurHash3 finalizer so every output bit
    /// depends on every input bit (FNV alone leaves the high bits, which pick the register, poorly mixed).
    public static func hash(string: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in string.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }
}
