import Collector
import Foundation
import Logging
import Synchronization
import Testing

/// A value an app sent (a widget type inside an error, a libmicrohttpd line quoting a request) cannot forge a log
/// line, a field or a terminal escape, in either format.
@Suite struct CollectorLoggerTests {
    static let nasty = [
        "line1\n{\"ts\":\"forged\",\"level\":\"error\",\"msg\":\"forged\"}",
        "cr\rlevel=error msg=forged", "esc\u{1B}[2J\u{1B}[31mred\u{1B}]0;title\u{7}", "c1\u{9B}31m\u{85}",
        "bidi\u{202E}desrever\u{202C}", "sep\u{2028}x\u{2029}", "nul\u{0}after", "quote\" key=value \\ back",
        "tab\there", "", " ", "日本語🧨",
    ]

    private final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    private func logged(_ format: Logger.Format, _ value: String) -> String? {
        let lines = Lines()
        let logger = Logger(threshold: .debug, format: format) { lines.append($0) }
        logger.warning("message " + value, ["field": value, "other": "plain"])
        logger.log(.error, value, fields: [(key: "k" + value, value: value)])
        #expect(lines.all.count == 2)
        return lines.all.first
    }

    /// Whether `line` holds anything a terminal or a line-based log reader acts on.
    private func isInert(_ line: String) -> Bool {
        !line.unicodeScalars.contains { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || [0x2028, 0x2029, 0x202E].contains(scalar.value)
        }
    }

    @Test(arguments: nasty)
    func jsonLinesStayOneObjectWithTheValueIntact(value: String) throws {
        let line = try #require(logged(.json, value))
        #expect(isInert(line), "\(line.debugDescription)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["msg"] == "message " + value)
        #expect(object["field"] == value)
        #expect(object["other"] == "plain")
        #expect(object["level"] == "warning")
    }

    @Test(arguments: nasty)
    func logfmtLinesKeepEveryFieldApart(value: String) throws {
        let line = try #require(logged(.logfmt, value))
        #expect(isInert(line), "\(line.debugDescription)")
        let fields = try Self.parseLogfmt(line)
        #expect(fields.map(\.key) == ["ts", "level", "msg", "field", "other"])
        #expect(fields[1].value == "warning")
        #expect(fields[2].value == "message " + value)
        #expect(fields[3].value == value)
        #expect(fields[4].value == "plain")
    }

    @Test func logfmtKeysCannotStartAnotherField() throws {
        let lines = Lines()
        let logger = Logger(threshold: .debug, format: .logfmt) { lines.append($0) }
        logger.log(.info, "m", fields: [(key: "a b=c\n", value: "v")])
        let fields = try Self.parseLogfmt(try #require(lines.all.first))
        #expect(fields.map(\.key) == ["ts", "level", "msg", "a_b_c_"])
    }

    /// A logfmt reader: `key=value` pairs split by spaces; a quoted value takes JSON-style escapes.
    static func parseLogfmt(_ line: String) throws -> [(key: String, value: String)] {
        struct Malformed: Error {}
        var fields: [(key: String, value: String)] = []
        var rest = Substring(line)
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { throw Malformed() }
            let key = String(rest[..<equals])
            guard !key.isEmpty, !key.contains(" ") else { throw Malformed() }
            rest = rest[rest.index(after: equals)...]
            if rest.first == "\"" {
                var end = rest.index(after: rest.startIndex)
                while end < rest.endIndex, rest[end] != "\"" {
                    if rest[end] == "\\" { end = rest.index(after: end) }
                    guard end < rest.endIndex else { throw Malformed() }
                    end = rest.index(after: end)
                }
                guard end < rest.endIndex else { throw Malformed() }
                let quoted = String(rest[...end])
                let value = try #require(
                    try JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed) as? String)
                fields.append((key, value))
                rest = rest[rest.index(after: end)...]
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                fields.append((key, String(rest[..<end])))
                rest = rest[end...]
            }
            if rest.first == " " { rest = rest.dropFirst() } else if !rest.isEmpty { throw Malformed() }
        }
        return fields
    }
}
