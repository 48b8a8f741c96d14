import HTTPServer

/// The filters a console page carries in its URL (app, team and the window), so a pasted link opens the same view.
struct ConsoleFilters: Sendable {
    /// `app`: only this app.
    var app: String?
    /// `team`: only the findings the owners file gives this team.
    var team: String?
    /// `since`: the window as a look-back (`24h` unless `from` is given).
    var since: String?
    /// `from`: the window's start (RFC 3339).
    var from: String?
    /// `to`: the window's end (RFC 3339 or `now`).
    var to: String?

    /// The filters of `request`'s query.
    init(_ request: HTTPRequest) {
        func value(_ name: String) -> String? {
            request.queryValue(name).flatMap { $0.isEmpty ? nil : $0 }
        }
        app = value("app")
        team = value("team")
        since = value("since")
        from = value("from")
        to = value("to")
        // The form sends the look-back it was shown with; a start typed into it wins.
        if from != nil { since = nil }
    }

    /// The query parameters for a read query: the window (24 h by default) and the filters that are set.
    var queryParameters: [(name: String, value: String?)] {
        var items: [(name: String, value: String?)] = []
        if let from {
            items.append((name: "from", value: from))
        } else {
            items.append((name: "since", value: since ?? "24h"))
        }
        if let to { items.append((name: "to", value: to)) }
        if let app { items.append((name: "app", value: app)) }
        if let team { items.append((name: "team", value: team)) }
        return items
    }

    /// The filters as a URL query (`?app=…&since=…`), empty when none is set; `extra` items come first.
    func query(_ extra: [(String, String)] = []) -> String {
        var items = extra
        if let app { items.append(("app", app)) }
        if let team { items.append(("team", team)) }
        if let since { items.append(("since", since)) }
        if let from { items.append(("from", from)) }
        if let to { items.append(("to", to)) }
        guard !items.isEmpty else { return "" }
        return "?" + items.map { "\(Self.percentEncoded($0.0))=\(Self.percentEncoded($0.1))" }.joined(separator: "&")
    }

    /// `text` percent-encoded for a URL query component.
    static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.append(Character(Unicode.Scalar(byte)))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }

    /// The same filters as `flowmeter` options, for the command line a page shows.
    var commandLineOptions: String {
        var words: [String] = []
        if let app { words += ["--app", app] }
        if let from { words += ["--from", from] } else { words += ["--since", since ?? "24h"] }
        if let to { words += ["--to", to] }
        if let team { words += ["--team", team] }
        return words.map { word in
            word.allSatisfy { $0.isLetter || $0.isNumber || "-._:@/".contains($0) } ? word : "'\(word)'"
        }.joined(separator: " ")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
