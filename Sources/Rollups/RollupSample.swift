/// One example of a series' events: where in the page it happened and what the app said.
///
/// `codingPath` is normalized (`page.sections.Index 0.widgets.Index 12` → `page.sections.Index *.widgets.Index *`)
/// so the same place on different pages and positions is one sample. Samples order by (codingPath, message, pageID)
/// by UTF-8 bytes, absent values first; a rollup keeps the first few distinct (codingPath, message) pairs in that
/// order, which makes the kept set independent of merge order.
public struct RollupSample: Hashable, Comparable, Sendable {
    /// The normalized coding path; `""` when the event carried none.
    public var codingPath: String
    /// The app's message.
    public var message: String?
    /// The page being decoded.
    public var pageID: String?

    /// Creates a sample, normalizing `codingPath`.
    public init(codingPath: String?, message: String?, pageID: String?) {
        self.codingPath = codingPath.map(Self.normalizedPath) ?? ""
        self.message = message
        self.pageID = pageID
    }

    /// Creates a sample whose `codingPath` is already normalized.
    init(normalizedPath: String, message: String?, pageID: String?) {
        self.codingPath = normalizedPath
        self.message = message
        self.pageID = pageID
    }

    /// `path` with every array index (`Index 12`) replaced by `Index *`; other text is kept as it is.
    public static func normalizedPath(_ path: String) -> String {
        var path = path
        return path.withUTF8 { raw in
            // Most paths hold an index; the unchanged case still returns without building a string.
            guard raw.indices.contains(where: { isIndexDigitRun(raw, at: $0) }) else { return nil }
            var output: [UInt8] = []
            output.reserveCapacity(raw.count)
            forEachNormalizedByte(raw) { output.append($0) }
            return String(decoding: output, as: UTF8.self)
        } ?? path
    }

    /// How `normalizedPath(raw)` orders against `normalized` (a path `normalizedPath` made) by UTF-8 bytes, without
    /// building the normalized path; stops at the first byte that differs.
    ///
    /// Equal bytes are skipped eight at a time: where `raw` and a normalized path agree, normalizing changes nothing
    /// (a digit run after `Index ` in `raw` would face a digit after `Index ` in `normalized`, which normalizing never
    /// leaves), so only a differing byte can be where a run of `raw` becomes `*`.
    static func compareNormalized(_ raw: String, to normalized: String) -> ComparisonOrder {
        // Native strings lend their bytes in place; copying them into `var`s for `withUTF8` cost a retain and a
        // release of each per comparison.
        let inPlace = raw.utf8.withContiguousStorageIfAvailable { rawBytes in
            normalized.utf8.withContiguousStorageIfAvailable { other in compareNormalized(rawBytes, to: other) }
        }
        if let order = inPlace ?? nil { return order }
        var raw = raw
        var normalized = normalized
        return raw.withUTF8 { rawBytes in
            normalized.withUTF8 { other in compareNormalized(rawBytes, to: other) }
        }
    }

    private static func compareNormalized(
        _ raw: UnsafeBufferPointer<UInt8>, to other: UnsafeBufferPointer<UInt8>
    ) -> ComparisonOrder {
        var index = 0
        var position = 0
        while true {
            let same = commonPrefixLength(raw, from: index, other, from: position)
            index += same
            position += same
            guard index < raw.count else { return position < other.count ? .orderedAscending : .orderedSame }
            guard position < other.count else { return .orderedDescending }
            guard isIndexDigitRun(raw, at: index) else {
                return raw[index] < other[position] ? .orderedAscending : .orderedDescending
            }
            let star = UInt8(ascii: "*")
            guard other[position] == star else {
                return star < other[position] ? .orderedAscending : .orderedDescending
            }
            while index < raw.count, raw[index] >= 48, raw[index] <= 57 { index += 1 }
            position += 1
        }
    }

    /// How many bytes `left` from `leftStart` and `right` from `rightStart` have in common, compared a word at a time.
    @inline(__always)
    private static func commonPrefixLength(
        _ left: UnsafeBufferPointer<UInt8>, from leftStart: Int, _ right: UnsafeBufferPointer<UInt8>,
        from rightStart: Int
    ) -> Int {
        let count = min(left.count - leftStart, right.count - rightStart)
        guard count > 0, let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return 0 }
        let leftBytes = UnsafeRawPointer(leftBase + leftStart)
        let rightBytes = UnsafeRawPointer(rightBase + rightStart)
        var offset = 0
        while offset + 8 <= count {
            let difference =
                leftBytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                ^ rightBytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if difference != 0 { return offset + difference.littleEndian.trailingZeroBitCount >> 3 }
            offset += 8
        }
        while offset < count,
            leftBytes.load(fromByteOffset: offset, as: UInt8.self)
                == rightBytes.load(fromByteOffset: offset, as: UInt8.self)
        {
            offset += 1
        }
        return offset
    }

    enum ComparisonOrder {
        case orderedAscending, orderedSame, orderedDescending
    }

    /// Calls `body` with each byte of the normalized path: a run of digits right after `Index ` becomes `*`.
    private static func forEachNormalizedByte(_ raw: UnsafeBufferPointer<UInt8>, _ body: (UInt8) -> Void) {
        var index = 0
        while index < raw.count {
            if isIndexDigitRun(raw, at: index) {
                body(UInt8(ascii: "*"))
                while index < raw.count, raw[index] >= 48, raw[index] <= 57 { index += 1 }
            } else {
                body(raw[index])
                index += 1
            }
        }
    }

    /// Whether a digit run starts at `index` right after `Index `.
    private static func isIndexDigitRun(_ raw: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        guard index >= 6, raw[index] >= 48, raw[index] <= 57, raw[index - 1] == UInt8(ascii: " ") else { return false }
        return raw[index - 6] == UInt8(ascii: "I") && raw[index - 5] == UInt8(ascii: "n")
            && raw[index - 4] == UInt8(ascii: "d") && raw[index - 3] == UInt8(ascii: "e")
            && raw[index - 2] == UInt8(ascii: "x")
    }

    /// Whether two samples are the same place and message (pageID aside): the distinctness a rollup keeps.
    public func isSameSample(as other: RollupSample) -> Bool {
        codingPath == other.codingPath && message == other.message
    }

    public static func < (lhs: RollupSample, rhs: RollupSample) -> Bool {
        if lhs.codingPath != rhs.codingPath { return utf8Less(lhs.codingPath, rhs.codingPath) }
        if lhs.message != rhs.message { return optionalLess(lhs.message, rhs.message) }
        return optionalLess(lhs.pageID, rhs.pageID)
    }

    /// Whether `lhs` sorts before `rhs`, absent first, then by UTF-8 bytes.
    static func optionalLess(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case (let left?, let right?): return utf8Less(left, right)
        }
    }
}
