import Foundation

/// `url` with any password replaced by `***`, for logs, errors, `/readyz` and help text: the one in a URI's user
/// part (`postgres://user:secret@host/db`), and every `password=` setting (a URI's query or a keyword string).
///
/// Everything else stays, so an operator still sees which host and database were meant.
public func redactedStoreURL(_ url: String) -> String {
    var text = url
    if let scheme = text.range(of: "://") {
        let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
        if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
            let colon = text[scheme.upperBound..<at].firstIndex(of: ":")
        {
            text.replaceSubrange(text.index(after: colon)..<at, with: "***")
        }
    }
    var result = ""
    var rest = Substring(text)
    while let found = rest.range(of: "password=", options: .caseInsensitive) {
        let isWhole = found.lowerBound == rest.startIndex || " ?&".contains(rest[rest.index(before: found.lowerBound)])
        result += rest[..<found.upperBound]
        rest = rest[found.upperBound...]
        guard isWhole else { continue }
        let end: Substring.Index
        if rest.first == "'" {
            // A quoted keyword value ends at the next unescaped quote.
            var index = rest.index(after: rest.startIndex)
            while index < rest.endIndex, rest[index] != "'" {
                index =
                    rest[index] == "\\"
                    ? rest.index(index, offsetBy: 2, limitedBy: rest.endIndex) ?? rest.endIndex
                    : rest.index(after: index)
            }
            end = index < rest.endIndex ? rest.index(after: index) : index
        } else {
            end = rest.firstIndex { $0 == "&" || $0 == " " } ?? rest.endIndex
        }
        result += "***"
        rest = rest[end...]
    }
    return result + rest
}
