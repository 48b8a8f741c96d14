import Foundation

/// The line of every value in a JSON document, by its coding path, so CI annotations point at the widget itself.
///
/// Paths are spelled as `PageWalker` spells them (`page.sections.Index 0.widgets.Index 1`): keys joined by `.`, array
/// elements as `Index N`. A document without a `page` object is its own page, so `page.` then stands for the root.
/// A member's line is its key's; an array element's line is where the element starts. A scanner, not a validator:
/// the payload was parsed before.
struct CheckLineIndex: Sendable {
    private var lines: [String: Int] = [:]
    private var hasPageKey = false
    /// The line the document starts on (NDJSON: its line in the stream).
    let firstLine: Int

    /// Indexes `bytes`, the first of which is on line `firstLine`; keeps at most `limit` paths.
    init(_ bytes: [UInt8], firstLine: Int = 1, limit: Int = 200_000) {
        self.firstLine = firstLine
        var scanner = Scanner(bytes: bytes, line: firstLine, limit: limit)
        scanner.skipSpace()
        scanner.value(path: "", depth: 0)
        lines = scanner.lines
        hasPageKey = scanner.lines["page"] != nil
    }

    /// The line of `codingPath`, or of its nearest indexed ancestor, or the document's first line.
    func line(of codingPath: String) -> Int {
        var path = codingPath
        if !hasPageKey {
            if path == "page" { return firstLine }
            if path.hasPrefix("page.") { path.removeFirst(5) }
        }
        while !path.isEmpty {
            if let line = lines[path] { return line }
            guard let dot = path.lastIndex(of: ".") else { break }
            path = String(path[..<dot])
        }
        return firstLine
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line: Int
        let limit: Int
        var lines: [String: Int] = [:]

        init(bytes: [UInt8], line: Int, limit: Int) {
            self.bytes = bytes
            self.line = line
            self.limit = limit
        }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\n"): line += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): break
                default: return
                }
                index += 1
            }
        }

        mutating func record(_ path: String, at line: Int) {
            if !path.isEmpty, lines.count < limit, lines[path] == nil { lines[path] = line }
        }

        mutating func value(path: String, depth: Int) {
            guard index < bytes.count, depth < PageWalker.maxDepth else { return }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                skipSpace()
                while index < bytes.count, bytes[index] != UInt8(ascii: "}") {
                    let keyLine = line
                    let key = string()
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: ":") { index += 1 }
                    skipSpace()
                    let child = path.isEmpty ? key : path + "." + key
                    record(child, at: keyLine)
                    value(path: child, depth: depth + 1)
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: ",") { index += 1 }
                    skipSpace()
                }
                index += 1
            case UInt8(ascii: "["):
                index += 1
                skipSpace()
                var element = 0
                while index < bytes.count, bytes[index] != UInt8(ascii: "]") {
                    let child = (path.isEmpty ? "" : path + ".") + "Index \(element)"
                    record(child, at: line)
                    value(path: child, depth: depth + 1)
                    element += 1
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: ",") { index += 1 }
                    skipSpace()
                }
                index += 1
            case UInt8(ascii: "\""):
                _ = string()
            default:
                // A number, true, false or null.
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
                        || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                        || byte == UInt8(ascii: "\t")
                    {
                        break
                    }
                    index += 1
                }
            }
        }

        /// A string token's text (escapes decoded); the index ends past the closing quote.
        mutating func string() -> String {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return "" }
            index += 1
            var raw: [UInt8] = [UInt8(ascii: "\"")]
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    raw.append(bytes[index])
                    index += 1
                }
                raw.append(bytes[index])
                index += 1
            }
            index += 1
            raw.append(UInt8(ascii: "\""))
            if !raw.contains(UInt8(ascii: "\\")) { return String(decoding: raw.dropFirst().dropLast(), as: UTF8.self) }
            return (try? JSONDecoder().decode(String.self, from: Data(raw))) ?? String(decoding: raw, as: UTF8.self)
        }
    }
}
