/// A small deflate (RFC 1951) compressor: LZ77 over a 32 KiB window with hash chains and one step of lazy matching,
/// then per block whichever of fixed or dynamic Huffman codes is smaller.
///
/// Written for batch bodies (a few KiB to 512 KiB of JSON); roughly zlib level 4–6 in ratio. Output is checked
/// against zlib's inflate in the tests.
enum Deflate {
    static let windowSize = 32_768
    static let minMatch = 3
    static let maxMatch = 258
    static let maxChain = 48
    static let niceLength = 96
    static let tokensPerBlock = 32_768

    /// `input` as a raw deflate stream (no zlib or gzip framing).
    static func compress(_ input: [UInt8]) -> [UInt8] {
        var writer = BitWriter()
        writer.output.reserveCapacity(input.count / 3 + 64)
        let tokens = input.withUnsafeBufferPointer { matchTokens($0) }
        if tokens.isEmpty {
            writeBlock(tokens[...], isFinal: true, to: &writer)
        } else {
            var start = 0
            while start < tokens.count {
                let end = min(tokens.count, start + tokensPerBlock)
                writeBlock(tokens[start..<end], isFinal: end == tokens.count, to: &writer)
                start = end
            }
        }
        writer.finish()
        return writer.output
    }

    // MARK: - LZ77

    /// A literal (`value < 256`, top bit clear) or a match (top bit set, length << 16 | distance).
    typealias Token = UInt32

    static func matchTokens(_ input: UnsafeBufferPointer<UInt8>) -> [Token] {
        let count = input.count
        var tokens: [Token] = []
        tokens.reserveCapacity(count / 4 + 16)
        guard count >= minMatch else {
            for byte in input { tokens.append(Token(byte)) }
            return tokens
        }
        let hashSize = 1 << 15
        var head = [Int32](repeating: -1, count: hashSize)
        var previous = [Int32](repeating: -1, count: windowSize)
        @inline(__always) func hash(_ position: Int) -> Int {
            (Int(input[position]) << 10 ^ Int(input[position + 1]) << 5 ^ Int(input[position + 2])) & (hashSize - 1)
        }
        @inline(__always) func insert(_ position: Int) {
            guard position + minMatch <= count else { return }
            let slot = hash(position)
            previous[position & (windowSize - 1)] = head[slot]
            head[slot] = Int32(position)
        }
        @inline(__always) func longestMatch(at position: Int) -> (length: Int, distance: Int) {
            guard position + minMatch <= count else { return (0, 0) }
            var candidate = Int(head[hash(position)])
            var bestLength = 0
            var bestDistance = 0
            var chain = maxChain
            let limit = min(maxMatch, count - position)
            while candidate >= 0 && chain > 0 {
                let distance = position - candidate
                if distance > windowSize || distance <= 0 { break }
                if input[candidate + bestLength] == input[position + bestLength] {
                    var length = 0
                    while length < limit && input[candidate + length] == input[position + length] { length += 1 }
                    if length > bestLength {
                        bestLength = length
                        bestDistance = distance
                        if length >= niceLength || length == limit { break }
                    }
                }
                let next = Int(previous[candidate & (windowSize - 1)])
                // Chains only go back in time; a newer entry means the slot was overwritten by a wrap.
                if next >= candidate { break }
                candidate = next
                chain -= 1
            }
            return bestLength >= minMatch ? (bestLength, bestDistance) : (0, 0)
        }

        var position = 0
        while position < count {
            var match = longestMatch(at: position)
            insert(position)
            if match.length > 0 && match.length < niceLength && position + 1 < count {
                // Lazy step: a longer match one byte on wins, and this byte goes out as a literal.
                let next = longestMatch(at: position + 1)
                if next.length > match.length {
                    tokens.append(Token(input[position]))
                    position += 1
                    match = next
                    insert(position)
                }
            }
            if match.length == 0 {
                tokens.append(Token(input[position]))
                position += 1
                continue
            }
            tokens.append(0x8000_0000 | Token(match.length) << 16 | Token(match.distance))
            for offset in 1..<match.length { insert(position + offset) }
            position += match.length
        }
        return tokens
    }

    // MARK: - Blocks

    static func writeBlock(_ tokens: ArraySlice<Token>, isFinal: Bool, to writer: inout BitWriter) {
        var literalFrequencies = [Int](repeating: 0, count: 286)
        var distanceFrequencies = [Int](repeating: 0, count: 30)
        for token in tokens {
            if token & 0x8000_0000 == 0 {
                literalFrequencies[Int(token)] += 1
            } else {
                literalFrequencies[Tables.lengthSymbol[Int(token >> 16 & 0x1FF)]] += 1
                distanceFrequencies[Tables.distanceSymbol(Int(token & 0xFFFF))] += 1
            }
        }
        literalFrequencies[256] = 1
        // Two used symbols at least in every alphabet, so each code is complete, as zlib's inflate insists.
        ensureTwoSymbols(&literalFrequencies)
        ensureTwoSymbols(&distanceFrequencies)

        let literalLengths = Huffman.lengths(literalFrequencies, limit: 15)
        let distanceLengths = Huffman.lengths(distanceFrequencies, limit: 15)
        let header = DynamicHeader(literalLengths: literalLengths, distanceLengths: distanceLengths)
        let dynamicBits =
            header.bitCount + cost(literalFrequencies, literalLengths) + cost(distanceFrequencies, distanceLengths)
        let fixedBits =
            cost(literalFrequencies, Tables.fixedLiteralLengths)
            + cost(distanceFrequencies, Tables.fixedDistanceLengths)

        writer.write(isFinal ? 1 : 0, count: 1)
        let literalCodes: [UInt32]
        let distanceCodes: [UInt32]
        let literalBits: [UInt8]
        let distanceBits: [UInt8]
        if fixedBits <= dynamicBits {
            writer.write(1, count: 2)
            literalBits = Tables.fixedLiteralLengths
            distanceBits = Tables.fixedDistanceLengths
            literalCodes = Tables.fixedLiteralCodes
            distanceCodes = Tables.fixedDistanceCodes
        } else {
            writer.write(2, count: 2)
            header.write(to: &writer)
            literalBits = literalLengths
            distanceBits = distanceLengths
            literalCodes = Huffman.codes(literalLengths)
            distanceCodes = Huffman.codes(distanceLengths)
        }
        for token in tokens {
            if token & 0x8000_0000 == 0 {
                writer.write(literalCodes[Int(token)], count: Int(literalBits[Int(token)]))
                continue
            }
            let length = Int(token >> 16 & 0x1FF)
            let symbol = Tables.lengthSymbol[length]
            writer.write(literalCodes[symbol], count: Int(literalBits[symbol]))
            let lengthIndex = symbol - 257
            let lengthExtra = Int(Tables.lengthExtraBits[lengthIndex])
            if lengthExtra > 0 {
                writer.write(UInt32(length - Int(Tables.lengthBase[lengthIndex])), count: lengthExtra)
            }
            let distance = Int(token & 0xFFFF)
            let distanceSymbol = Tables.distanceSymbol(distance)
            writer.write(distanceCodes[distanceSymbol], count: Int(distanceBits[distanceSymbol]))
            let distanceExtra = Int(Tables.distanceExtraBits[distanceSymbol])
            if distanceExtra > 0 {
                writer.write(UInt32(distance - Int(Tables.distanceBase[distanceSymbol])), count: distanceExtra)
            }
        }
        writer.write(literalCodes[256], count: Int(literalBits[256]))
    }

    static func ensureTwoSymbols(_ frequencies: inout [Int]) {
        var used = frequencies.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        var index = 0
        while used < 2 && index < frequencies.count {
            if frequencies[index] == 0 {
                frequencies[index] = 1
                used += 1
            }
            index += 1
        }
    }

    /// Bits to code `frequencies` with `lengths`, extra bits left out (they are the same for every code).
    static func cost(_ frequencies: [Int], _ lengths: [UInt8]) -> Int {
        var bits = 0
        for index in frequencies.indices where frequencies[index] > 0 {
            bits += frequencies[index] * Int(lengths[index])
        }
        return bits
    }
}

/// Writes bits least significant first, as deflate packs them.
struct BitWriter {
    var output: [UInt8] = []
    private var buffer: UInt64 = 0
    private var count = 0

    @inline(__always)
    mutating func write(_ bits: UInt32, count bitCount: Int) {
        buffer |= UInt64(bits) << UInt64(count)
        count += bitCount
        while count >= 8 {
            output.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            count -= 8
        }
    }

    /// Writes the last partial byte, padded with zero bits.
    mutating func finish() {
        if count > 0 { output.append(UInt8(truncatingIfNeeded: buffer)) }
        buffer = 0
        count = 0
    }
}

/// The header of a dynamic Huffman block: the code lengths, run-length coded with the code-length alphabet.
struct DynamicHeader {
    static let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    let literalCount: Int
    let distanceCount: Int
    /// Code-length symbols with their extra bits.
    let symbols: [(symbol: Int, extra: UInt32)]
    let codeLengthLengths: [UInt8]
    let codeLengthCount: Int

    init(literalLengths: [UInt8], distanceLengths: [UInt8]) {
        literalCount = max(257, (literalLengths.lastIndex { $0 != 0 } ?? 0) + 1)
        distanceCount = max(1, (distanceLengths.lastIndex { $0 != 0 } ?? 0) + 1)
        let all = Array(literalLengths[..<literalCount]) + Array(distanceLengths[..<distanceCount])
        var symbols: [(symbol: Int, extra: UInt32)] = []
        var index = 0
        while index < all.count {
            let value = all[index]
            var run = 1
            while index + run < all.count && all[index + run] == value { run += 1 }
            index += run
            if value == 0 {
                while run >= 11 {
                    let take = min(run, 138)
                    symbols.append((18, UInt32(take - 11)))
                    run -= take
                }
                if run >= 3 {
                    symbols.append((17, UInt32(run - 3)))
                    run = 0
                }
            } else {
                symbols.append((Int(value), 0))
                run -= 1
                while run >= 3 {
                    let take = min(run, 6)
                    symbols.append((16, UInt32(take - 3)))
                    run -= take
                }
            }
            for _ in 0..<run { symbols.append((Int(value), 0)) }
        }
        self.symbols = symbols
        var frequencies = [Int](repeating: 0, count: 19)
        for entry in symbols { frequencies[entry.symbol] += 1 }
        Deflate.ensureTwoSymbols(&frequencies)
        codeLengthLengths = Huffman.lengths(frequencies, limit: 7)
        var count = 19
        while count > 4 && codeLengthLengths[Self.order[count - 1]] == 0 { count -= 1 }
        codeLengthCount = count
    }

    var bitCount: Int {
        var bits = 5 + 5 + 4 + 3 * codeLengthCount
        for entry in symbols {
            bits += Int(codeLengthLengths[entry.symbol])
            switch entry.symbol {
            case 16: bits += 2
            case 17: bits += 3
            case 18: bits += 7
            default: break
            }
        }
        return bits
    }

    func write(to writer: inout BitWriter) {
        writer.write(UInt32(literalCount - 257), count: 5)
        writer.write(UInt32(distanceCount - 1), count: 5)
        writer.write(UInt32(codeLengthCount - 4), count: 4)
        for position in 0..<codeLengthCount {
            writer.write(UInt32(codeLengthLengths[Self.order[position]]), count: 3)
        }
        let codes = Huffman.codes(codeLengthLengths)
        for entry in symbols {
            writer.write(codes[entry.symbol], count: Int(codeLengthLengths[entry.symbol]))
            switch entry.symbol {
            case 16: writer.write(entry.extra, count: 2)
            case 17: writer.write(entry.extra, count: 3)
            case 18: writer.write(entry.extra, count: 7)
            default: break
            }
        }
    }
}

/// Length-limited Huffman code lengths and canonical codes.
enum Huffman {
    /// Code lengths for `frequencies`, none longer than `limit`; unused symbols get 0.
    static func lengths(_ frequencies: [Int], limit: Int) -> [UInt8] {
        var weights = frequencies
        while true {
            let lengths = unlimitedLengths(weights)
            if (lengths.max() ?? 0) <= limit { return lengths }
            // Flatten the distribution and try again: halving keeps every used symbol used.
            weights = weights.map { $0 == 0 ? 0 : max(1, $0 / 2) }
        }
    }

    /// Plain Huffman code lengths (two-queue construction over the sorted leaves).
    static func unlimitedLengths(_ frequencies: [Int]) -> [UInt8] {
        var lengths = [UInt8](repeating: 0, count: frequencies.count)
        let leaves = frequencies.indices.filter { frequencies[$0] > 0 }.sorted {
            (frequencies[$0], $0) < (frequencies[$1], $1)
        }
        if leaves.count == 1 {
            lengths[leaves[0]] = 1
            return lengths
        }
        guard leaves.count > 1 else { return lengths }
        // Nodes 0..<n are leaves; internal nodes follow. parent[node] links each node up the tree.
        var weight = leaves.map { frequencies[$0] }
        var parent = [Int](repeating: -1, count: leaves.count * 2 - 1)
        var leafIndex = 0
        var internalIndex = leaves.count
        var nextInternal = leaves.count
        func takeSmallest() -> Int {
            if leafIndex < leaves.count && (internalIndex >= nextInternal || weight[leafIndex] <= weight[internalIndex])
            {
                leafIndex += 1
                return leafIndex - 1
            }
            internalIndex += 1
            return internalIndex - 1
        }
        while nextInternal < leaves.count * 2 - 1 {
            let first = takeSmallest()
            let second = takeSmallest()
            weight.append(weight[first] + weight[second])
            parent[first] = nextInternal
            parent[second] = nextInternal
            nextInternal += 1
        }
        var depth = [Int](repeating: 0, count: parent.count)
        for node in stride(from: parent.count - 2, through: 0, by: -1) {
            depth[node] = depth[parent[node]] + 1
        }
        for (position, symbol) in leaves.enumerated() {
            lengths[symbol] = UInt8(min(depth[position], 255))
        }
        return lengths
    }

    /// Canonical codes for `lengths` (RFC 1951 §3.2.2), bit-reversed for least-significant-first writing.
    static func codes(_ lengths: [UInt8]) -> [UInt32] {
        let maxLength = Int(lengths.max() ?? 0)
        var lengthCounts = [UInt32](repeating: 0, count: maxLength + 1)
        for length in lengths where length > 0 { lengthCounts[Int(length)] += 1 }
        var nextCode = [UInt32](repeating: 0, count: maxLength + 2)
        var code: UInt32 = 0
        if maxLength > 0 {
            for bits in 1...maxLength {
                code = (code + lengthCounts[bits - 1]) << 1
                nextCode[bits] = code
            }
        }
        var codes = [UInt32](repeating: 0, count: lengths.count)
        for symbol in lengths.indices where lengths[symbol] > 0 {
            let length = Int(lengths[symbol])
            codes[symbol] = reverse(nextCode[length], bits: length)
            nextCode[length] += 1
        }
        return codes
    }

    static func reverse(_ value: UInt32, bits: Int) -> UInt32 {
        var result: UInt32 = 0
        var rest = value
        for _ in 0..<bits {
            result = result << 1 | rest & 1
            rest >>= 1
        }
        return result
    }
}

/// Deflate's fixed tables.
enum Tables {
    static let lengthBase: [UInt16] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    static let lengthExtraBits: [UInt8] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    static let distanceBase: [UInt16] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtraBits: [UInt8] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]

    /// The length symbol (257–285) of each match length 0–258 (entries below 3 are unused).
    static let lengthSymbol: [Int] = (0...258).map { length in
        guard length >= 3 else { return 257 }
        if length == 258 { return 285 }
        var index = 0
        while index + 1 < 28 && Int(lengthBase[index + 1]) <= length { index += 1 }
        return 257 + index
    }

    /// The distance symbol of distances 1–256, and of `(distance - 1) >> 7` for longer ones, as zlib tabulates it.
    private static let shortDistanceSymbol: [UInt8] = (0..<512).map { slot in
        let distance = slot < 256 ? slot + 1 : ((slot - 256) << 7) + 1
        var index = 0
        while index + 1 < 30 && Int(distanceBase[index + 1]) <= distance { index += 1 }
        return UInt8(index)
    }

    @inline(__always)
    static func distanceSymbol(_ distance: Int) -> Int {
        distance <= 256
            ? Int(shortDistanceSymbol[distance - 1]) : Int(shortDistanceSymbol[256 + ((distance - 1) >> 7)])
    }

    static let fixedLiteralLengths: [UInt8] = (0..<288).map { symbol in
        switch symbol {
        case 0...143: return 8
        case 144...255: return 9
        case 256...279: return 7
        default: return 8
        }
    }
    static let fixedDistanceLengths = [UInt8](repeating: 5, count: 30)
    static let fixedLiteralCodes = Huffman.codes(fixedLiteralLengths)
    static let fixedDistanceCodes = Huffman.codes([UInt8](repeating: 5, count: 32))
}
