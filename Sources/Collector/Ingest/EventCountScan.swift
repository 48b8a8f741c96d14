/// Counts the elements of a batch's top-level `events` array without decoding, so an oversized batch is refused
/// before the decoder builds a report for each of a million broken elements.
///
/// A linear structural scan: it tracks strings (with escapes) and nesting depth, notes which top-level key is open,
/// and counts values that start directly inside the `events` array. It validates nothing; the decoder does that.
enum EventCountScan {
    /// The number of elements in the top-level `events` array, or 0 when there is none; stops counting past `limit`.
    static func count(in bytes: [UInt8], stoppingAfter limit: Int) -> Int {
        bytes.withUnsafeBufferPointer { buffer in count(in: buffer, stoppingAfter: limit) }
    }

    private static func count(in bytes: UnsafeBufferPointer<UInt8>, stoppingAfter limit: Int) -> Int {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var depth = 0
        var index = 0
        var count = 0
        var inEvents = false
        var expectingElement = false
        // The last string seen at depth 1 and whether a colon followed it: that names the value being read.
        var lastKeyStart = -1, lastKeyEnd = -1
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case quote:
                let start = index + 1
                index += 1
                while index < bytes.count && bytes[index] != quote {
                    index += bytes[index] == backslash ? 2 : 1
                }
                if depth == 1 {
                    lastKeyStart = start
                    lastKeyEnd = index
                }
                if inEvents && depth == 2 && expectingElement {
                    count += 1
                    expectingElement = false
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if inEvents && depth == 2 && expectingElement {
                    count += 1
                    expectingElement = false
                }
                depth += 1
                if depth == 2 && byte == UInt8(ascii: "[") && isEventsKey(bytes, lastKeyStart, lastKeyEnd) {
                    inEvents = true
                    expectingElement = true
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 2 && inEvents { return count }
                depth -= 1
            case UInt8(ascii: ","):
                if inEvents && depth == 2 { expectingElement = true }
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: ":"):
                break
            default:
                if inEvents && depth == 2 && expectingElement {
                    count += 1
                    expectingElement = false
                }
            }
            if count > limit { return count }
            index += 1
        }
        return count
    }

    private static func isEventsKey(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        guard start >= 0, end - start == 6 else { return false }
        return bytes[start] == UInt8(ascii: "e") && bytes[start + 1] == UInt8(ascii: "v")
            && bytes[start + 2] == UInt8(ascii: "e") && bytes[start + 3] == UInt8(ascii: "n")
            && bytes[start + 4] == UInt8(ascii: "t") && bytes[start + 5] == UInt8(ascii: "s")
    }
}
