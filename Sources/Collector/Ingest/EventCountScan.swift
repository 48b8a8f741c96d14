import Foundation

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
        let quote = UInt8(ascii: "\"")
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
                index = closingQuote(in: bytes, from: start)
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

    // The index of the quote that ends a string starting at `start` (or `bytes.count` when none does): memchr finds
    // each candidate, and a quote preceded by an odd run of backslashes is escaped. Most of a batch is inside
    // strings, so this is where the scan spends its time.
    private static func closingQuote(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        var from = start
        while from < bytes.count {
            guard let found = memchr(base + from, Int32(UInt8(ascii: "\"")), bytes.count - from) else {
                return bytes.count
            }
            let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var backslashes = 0
            while quote - backslashes - 1 >= start && bytes[quote - backslashes - 1] == UInt8(ascii: "\\") {
                backslashes += 1
            }
            if backslashes % 2 == 0 { return quote }
            from = quote + 1
        }
        return bytes.count
    }

    private static func isEventsKey(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        guard start >= 0, end - start == 6 else { return false }
        return bytes[start] == UInt8(ascii: "e") && bytes[start + 1] == UInt8(ascii: "v")
            && bytes[start + 2] == UInt8(ascii: "e") && bytes[start + 3] == UInt8(ascii: "n")
            && bytes[start + 4] == UInt8(ascii: "t") && bytes[start + 5] == UInt8(ascii: "s")
    }
}
