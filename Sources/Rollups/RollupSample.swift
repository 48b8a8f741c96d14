/// One example of a series' events: where in the page it happened and what the app said.
///
/// `codingPath` is normalized (`page.sections.Index 0.widgets.Index 12` → `page.sections.Index *.widgets.Index *`)
/// so the same place on different pages and positions is one sample. Samples order by (codingPath, message, pageID)
/// by UTF-8 bytes, absent values first; a rollup keeps the first few distinct (codingPath, message) pairs in that
/// order, which makes the kept set independent of merge order.
public struct RollupSample: Hashable, Comparable, Sendable, Codable {
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

    /// `path` with every array index (`Index 12`) replaced by `Index *`; other text is kept as it is.
    public static func normalizedPath(_ path: String) -> String {
        let bytes = path.utf8
        // Most paths are short; checking for any "Index <digit>" first keeps the unchanged case allocation-free.
        guard let first = firstIndexRun(in: bytes, from: bytes.startIndex) else { return path }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var cursor = bytes.startIndex
        var run: (digits: String.UTF8View.Index, end: String.UTF8View.Index)? = first
        while let (digits, end) = run {
            output.append(contentsOf: bytes[cursor..<digits])
            output.append(UInt8(ascii: "*"))
            cursor = end
            run = firstIndexRun(in: bytes, from: end)
        }
        output.append(contentsOf: bytes[cursor...])
        return String(decoding: output, as: UTF8.self)
    }

    /// The next `Index ` followed by digits at or after `start`: where the digits begin and end.
    private static func firstIndexRun(
        in bytes: String.UTF8View, from start: String.UTF8View.Index
    ) -> (String.UTF8View.Index, String.UTF8View.Index)? {
        let marker: [UInt8] = Array("Index ".utf8)
        var index = start
        while index < bytes.endIndex {
            if bytes[index] == marker[0], bytes[index...].starts(with: marker) {
                let digits = bytes.index(index, offsetBy: marker.count)
                var end = digits
                while end < bytes.endIndex, bytes[end] >= 48, bytes[end] <= 57 { end = bytes.index(after: end) }
                if end > digits { return (digits, end) }
                index = digits
            } else {
                index = bytes.index(after: index)
            }
        }
        return nil
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

    private static func optionalLess(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case (let left?, let right?): return utf8Less(left, right)
        }
    }
}
