import Foundation

/// Raw requests no HTTP client would send, for a plain socket: broken request lines, huge heads, bad chunked
/// encoding, wrong `Content-Length`, garbage bytes; then valid requests with bytes of their head flipped (zzuf-style).
///
/// Also what the answers may be: JSON from Flowmeter, or one of the pages libmicrohttpd 0.9.75 writes itself before
/// the request reaches Flowmeter (docs/collector.md lists them and why they cannot be JSON).
enum MalformedRequests {
    /// One raw request.
    struct Case {
        var name: String
        var bytes: [UInt8]
    }

    /// One answer read off the socket.
    struct Answer {
        var status: Int
        var contentType: String?
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The bodies libmicrohttpd 0.9.75 answers with itself (status, the `<body>` text), from its connection.c as
    /// Debian builds it (with messages), each seen on the wire by `Tests/FlowmeterCLITests/HostileRunTests.swift`.
    static let libmicrohttpdPages: [(status: Int, body: String)] = [
        (400, "Your HTTP request was syntactically incorrect."),
        (400, "Your HTTP chunked encoding was syntactically incorrect."),
        (400, "Your HTTP request has wrong value for <b>Content-Length</b> header."),
        (413, "Your HTTP request has too large value for <b>Content-Length</b> header."),
        (413, "The chunk size used in your HTTP chunked encoded request is too large."),
        (414, "Your HTTP header was too big for the memory constraints of this webserver."),
        (431, "Your HTTP header was too big for the memory constraints of this webserver."),
        (505, "Requested HTTP version is not supported."),
        (505, "Requested HTTP version is too old and not supported."),
    ]

    /// The catalog cases libmicrohttpd answers itself, with the statuses it gives, as docs/collector.md lists them.
    static let answeredByLibmicrohttpd: [String: [Int]] = [
        "request line without version": [400], "HTTP/0.9 style": [400], "lower-case version": [400],
        "version HTTP/x.y": [400], "version with a trailing space": [400], "NUL before the method": [400],
        "every byte": [400], "header without a colon": [400], "header with an empty name": [400],
        "bad chunked trailer": [400], "version HTTP/2.0": [505], "version HTTP/0.9": [505],
        "two requests, second broken": [505], "70,000-character URL": [414], "70,000-byte header": [431],
        "5,000 headers": [431], "negative Content-Length": [400], "non-numeric Content-Length": [400],
        "hex Content-Length": [400], "Content-Length list": [400], "Content-Length past 2^64": [413],
        "chunk size not hex": [400], "negative chunk size": [400], "empty chunk size": [400],
        "chunk without CRLF": [400], "chunk size past 2^64": [413],
    ]

    /// Whether `answer` is one of ``libmicrohttpdPages``: no `Content-Type`, an HTML page with that status and body.
    /// For a malformed `Content-Length`, 0.9.75 writes its status line and headers twice and the page once, so
    /// the body read by `Content-Length` starts with the second head.
    static func isLibmicrohttpdPage(_ answer: Answer) -> Bool {
        guard answer.contentType == nil else { return false }
        let text = answer.text
        return libmicrohttpdPages.contains { page in
            page.status == answer.status
                && (text.hasPrefix("<html><head><title>") && text.hasSuffix("<body>\(page.body)</body></html>")
                    || text.hasPrefix("HTTP/1.1 \(page.status) "))
        }
    }

    /// The complete responses at the start of `bytes` (a server may answer, then answer the garbage after the request
    /// as another one); what follows the last complete one (an answer cut short by a reset, or the rest of
    /// libmicrohttpd's doubled Content-Length page) is left out.
    static func answers(in bytes: [UInt8]) -> [Answer] {
        var rest = bytes[...]
        var answers: [Answer] = []
        let separator = Array("\r\n\r\n".utf8)
        while let end = rest.firstRange(of: separator) {
            let head = String(decoding: rest[..<end.lowerBound], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let parts = lines[0].split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else { break }
            var length = 0
            var contentType: String?
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if name == "content-length" { length = Int(value) ?? 0 }
                if name == "content-type" { contentType = value }
            }
            let body = rest[end.upperBound...]
            guard body.count >= length else { break }
            if status != 100 {
                answers.append(Answer(status: status, contentType: contentType, body: Array(body.prefix(length))))
            }
            rest = body.dropFirst(length)
        }
        return answers
    }

    /// The pieces a catalog case is built from: a valid batch with a fresh id (so two cases are never the same
    /// batch; a batch still waiting for Kafka is answered 503 to its retry), its length header, its chunked form.
    struct Parts {
        var key: String
        var body: [UInt8]
        var length: String { "Content-Length: \(body.count)\r\n" }
        var chunk: [UInt8] {
            Array("\(String(body.count, radix: 16))\r\n".utf8) + body + Array("\r\n0\r\n\r\n".utf8)
        }

        /// A request head up to (not including) the blank line, with the key and JSON content type, and `extra`;
        /// `Connection: close` unless `keepsAlive`, so the server closes once it has answered.
        func head(
            _ extra: String = "", method: String = "POST", path: String = "/v1/diagnostics",
            version: String = "HTTP/1.1", host: Bool = true, keepsAlive: Bool = false
        ) -> [UInt8] {
            var text = "\(method) \(path) \(version)\r\n"
            if host { text += "Host: 127.0.0.1\r\n" }
            if !keepsAlive { text += "Connection: close\r\n" }
            text += "Authorization: Bearer \(key)\r\nContent-Type: application/json\r\n" + extra
            return Array(text.utf8)
        }
    }

    /// The fixed catalog, for `key` (an ingest key); `makeBody` gives each case a valid batch of its own.
    static func catalog(key: String, makeBody: () -> [UInt8]) -> [Case] {
        let chunked = "Transfer-Encoding: chunked\r\n\r\n"
        let cases: [(String, (Parts) -> [UInt8])] = [
            ("valid", { p in p.head(p.length + "\r\n") + p.body }),
            (
                "garbage bytes",
                { _ in [0x00, 0x01, 0x02] + Array("garbage".utf8) + [0xFF, 0xFE, 0x0D, 0x0A, 0x0D, 0x0A] }
            ),
            ("every byte", { _ in Array((0...255).map { UInt8($0) }) + Array((0...255).map { UInt8($0) }) }),
            ("request line without version", { _ in Array("POST /v1/diagnostics\r\n\r\n".utf8) }),
            ("HTTP/0.9 style", { _ in Array("GET /healthz\r\n\r\n".utf8) }),
            ("lower-case version", { p in p.head(p.length + "\r\n", version: "http/1.1") + p.body }),
            ("version HTTP/x.y", { p in p.head(p.length + "\r\n", version: "HTTP/x.y") + p.body }),
            ("version HTTP/2.0", { p in p.head(p.length + "\r\n", version: "HTTP/2.0") + p.body }),
            ("version HTTP/0.9", { p in p.head(p.length + "\r\n", version: "HTTP/0.9") + p.body }),
            ("version with a trailing space", { p in p.head(p.length + "\r\n", version: "HTTP/1.1 ") + p.body }),
            ("tabs between the parts", { _ in Array("POST\t/v1/diagnostics\tHTTP/1.1\r\nHost: x\r\n\r\n".utf8) }),
            ("NUL before the method", { _ in Array("\u{0}POST /v1/diagnostics HTTP/1.1\r\nHost: x\r\n\r\n".utf8) }),
            ("unknown method", { _ in Array("BREW /v1/diagnostics HTTP/1.1\r\nHost: x\r\n\r\n".utf8) }),
            ("binary method", { _ in [0xFF, 0xFE] + Array(" /v1/diagnostics HTTP/1.1\r\nHost: x\r\n\r\n".utf8) }),
            ("CONNECT", { _ in Array("CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: x\r\n\r\n".utf8) }),
            ("TRACE", { _ in Array("TRACE / HTTP/1.1\r\nHost: x\r\n\r\n".utf8) }),
            ("absolute URI", { p in p.head(p.length + "\r\n", path: "http://127.0.0.1/v1/diagnostics") + p.body }),
            ("bad percent escapes", { p in p.head(p.length + "\r\n", path: "/v1/%zz%00diagnostics") + p.body }),
            ("ESC in the path", { p in p.head(p.length + "\r\n", path: "/v1/\u{1B}[2Jdiagnostics") + p.body }),
            ("no Host", { p in p.head(p.length + "\r\n", host: false) + p.body }),
            (
                "70,000-character URL",
                { p in p.head(p.length + "\r\n", path: "/v1/diagnostics?" + String(repeating: "a", count: 70_000)) }
            ),
            (
                "70,000-byte header",
                { p in p.head("X-Big: " + String(repeating: "a", count: 70_000) + "\r\n" + p.length + "\r\n") }
            ),
            (
                "5,000 headers",
                { p in p.head((0..<5000).map { "X-H\($0): v\r\n" }.joined() + p.length + "\r\n") + p.body }
            ),
            ("header without a colon", { p in p.head("NoColonHere\r\n" + p.length + "\r\n") + p.body }),
            ("header with an empty name", { p in p.head(": v\r\n" + p.length + "\r\n", keepsAlive: true) + p.body }),
            ("folded header", { p in p.head("X-Fold: a\r\n  continued\r\n" + p.length + "\r\n") + p.body }),
            ("NUL in a header", { p in p.head("X-Nul: a\u{0}b\r\n" + p.length + "\r\n") + p.body }),
            (
                "ESC in the key",
                { p in
                    Array(
                        "POST /v1/diagnostics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \u{1B}[2J\r\nContent-Type: application/json\r\n\(p.length)\r\n"
                            .utf8) + p.body
                }
            ),
            (
                "bare LF line ends",
                { p in
                    Array(
                        String(decoding: p.head(p.length + "\r\n"), as: UTF8.self).replacingOccurrences(
                            of: "\r\n", with: "\n"
                        ).utf8) + p.body
                }
            ),
            ("negative Content-Length", { p in p.head("Content-Length: -5\r\n\r\n") + p.body }),
            ("non-numeric Content-Length", { p in p.head("Content-Length: abc\r\n\r\n") + p.body }),
            ("hex Content-Length", { p in p.head("Content-Length: 0x10\r\n\r\n") + p.body }),
            (
                "Content-Length list",
                { p in p.head("Content-Length: \(p.body.count), \(p.body.count)\r\n\r\n") + p.body }
            ),
            ("Content-Length past 2^64", { p in p.head("Content-Length: 99999999999999999999999\r\n\r\n") + p.body }),
            ("Content-Length over the limit", { p in p.head("Content-Length: 2000000\r\n\r\n") + p.body }),
            ("two Content-Lengths", { p in p.head(p.length + "Content-Length: 3\r\n\r\n") + p.body }),
            ("Content-Length short", { p in p.head("Content-Length: 5\r\n\r\n") + p.body }),
            ("Content-Length long", { p in p.head("Content-Length: \(p.body.count + 100)\r\n\r\n") + p.body }),
            ("Content-Length and chunked", { p in p.head(p.length + chunked) + p.chunk }),
            ("chunked", { p in p.head(chunked) + p.chunk }),
            (
                "chunk size not hex",
                { p in p.head(chunked) + Array("zz\r\n".utf8) + p.body + Array("\r\n0\r\n\r\n".utf8) }
            ),
            ("chunk size past 2^64", { p in p.head(chunked) + Array("ffffffffffffffffffff\r\n".utf8) + p.body }),
            (
                "negative chunk size",
                { p in p.head(chunked) + Array("-5\r\n".utf8) + p.body + Array("\r\n0\r\n\r\n".utf8) }
            ),
            ("empty chunk size", { p in p.head(chunked) + Array("\r\n".utf8) + p.body + Array("\r\n0\r\n\r\n".utf8) }),
            ("chunk without CRLF", { p in p.head(chunked) + Array(p.chunk.dropLast(7)) + Array("XX0\r\n\r\n".utf8) }),
            (
                "chunked body cut short",
                { p in p.head(chunked) + Array("\(String(p.body.count + 50, radix: 16))\r\n".utf8) + p.body }
            ),
            (
                "bad chunked trailer",
                { p in p.head(chunked) + Array(p.chunk.dropLast(2)) + Array("nocolon\r\n\r\n".utf8) }
            ),
            ("chunked twice", { p in p.head("Transfer-Encoding: chunked, chunked\r\n\r\n") + p.chunk }),
            ("Transfer-Encoding gzip", { p in p.head("Transfer-Encoding: gzip\r\n" + p.length + "\r\n") + p.body }),
            (
                "chunked body over the limit",
                { p in p.head(chunked) + Array("200000\r\n".utf8) + [UInt8](repeating: 0x61, count: 0x20_0000) }
            ),
            ("Expect 100-continue", { p in p.head("Expect: 100-continue\r\n" + p.length + "\r\n") + p.body }),
            ("head never ends", { p in p.head(p.length) }),
            ("nothing", { _ in [] }),
            ("blank lines", { _ in Array("\r\n\r\n\r\n".utf8) }),
            (
                "garbage after a request",
                { p in p.head(p.length + "\r\n", keepsAlive: true) + p.body + Array("GARBAGE\r\n\r\n".utf8) }
            ),
            (
                "two requests, second broken",
                { p in p.head(p.length + "\r\n", keepsAlive: true) + p.body + Array("POST / HTTP/9.9\r\n\r\n".utf8) }
            ),
            ("gzip that is not gzip", { p in p.head("Content-Encoding: gzip\r\n" + p.length + "\r\n") + p.body }),
        ]
        return cases.map { name, build in Case(name: name, bytes: build(Parts(key: key, body: makeBody()))) }
    }

    /// `base` with a few random bytes of its head changed (zzuf-style), seeded by `random`.
    static func fuzzed(_ base: [UInt8], random: inout HostileBatches.Random) -> [UInt8] {
        var bytes = base
        let headLength = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound ?? bytes.count
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let index = Int.random(in: 0..<headLength, using: &random)
            if random.chance(0.5) {
                bytes[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            } else {
                bytes[index] = UInt8.random(in: 0...255, using: &random)
            }
        }
        return bytes
    }
}
