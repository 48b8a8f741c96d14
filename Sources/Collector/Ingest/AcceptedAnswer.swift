import FlowmeterModels
import FlowmeterWire

/// The 202 body of CONTRACT §1: `{"accepted":N,"dropped":M,"diagnostics":[{"kind","path","message"}]}`.
enum AcceptedAnswer {
    /// The body bytes for `accepted` events and one diagnostic per dropped event.
    static func body(accepted: Int, diagnostics: [DecodeDiagnostic]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(48 + diagnostics.count * 96)
        body.append(contentsOf: #"{"accepted":"#.utf8)
        body.append(contentsOf: String(accepted).utf8)
        body.append(contentsOf: #","dropped":"#.utf8)
        body.append(contentsOf: String(diagnostics.count).utf8)
        body.append(contentsOf: #","diagnostics":["#.utf8)
        for (position, diagnostic) in diagnostics.enumerated() {
            if position > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"kind":"#.utf8)
            JSONString.append(diagnostic.kind.rawValue, to: &body)
            body.append(contentsOf: #","path":"#.utf8)
            JSONString.append(diagnostic.path, to: &body)
            body.append(contentsOf: #","message":"#.utf8)
            JSONString.append(diagnostic.message, to: &body)
            body.append(UInt8(ascii: "}"))
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }
}
