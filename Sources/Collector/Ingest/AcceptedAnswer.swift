import FlowmeterModels
import FlowmeterWire

/// The 202 body of docs/api.md#ingest: `{"accepted":N,"dropped":M,"diagnostics":[{"kind","path","message"}]}`.
enum AcceptedAnswer {
    /// The most bytes of diagnostics a stored answer keeps (``stored(accepted:diagnostics:)``).
    static let maxStoredDiagnosticBytes = 1_024

    /// The body bytes for `accepted` events and one diagnostic per dropped event.
    static func body(accepted: Int, diagnostics: [DecodeDiagnostic]) -> [UInt8] {
        body(accepted: accepted, diagnostics: diagnostics, maxDiagnosticBytes: .max)
    }

    /// The answer repeated to a retry of the batch: the same counts, but only the diagnostics that fit in
    /// ``maxStoredDiagnosticBytes`` (at least the first when there is one, its message cut to 200 characters), so a
    /// remembered batch id holds at most 4 KiB of answer (about 1.2 KiB usually), not the up to 0.4 MB of a thousand
    /// diagnostics.
    /// `dropped` then exceeds the diagnostics listed.
    static func stored(accepted: Int, diagnostics: [DecodeDiagnostic]) -> [UInt8] {
        let kept = diagnostics.prefix(8).map { diagnostic in
            var diagnostic = diagnostic
            if diagnostic.message.count > 200 { diagnostic.message = String(diagnostic.message.prefix(200)) }
            if diagnostic.path.count > 200 { diagnostic.path = String(diagnostic.path.prefix(200)) }
            return diagnostic
        }
        return body(
            accepted: accepted, dropped: diagnostics.count, diagnostics: kept,
            maxDiagnosticBytes: maxStoredDiagnosticBytes)
    }

    private static func body(
        accepted: Int, dropped: Int? = nil, diagnostics: [DecodeDiagnostic], maxDiagnosticBytes: Int
    ) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(48 + min(diagnostics.count * 96, maxDiagnosticBytes))
        body.append(contentsOf: #"{"accepted":"#.utf8)
        body.append(contentsOf: String(accepted).utf8)
        body.append(contentsOf: #","dropped":"#.utf8)
        body.append(contentsOf: String(dropped ?? diagnostics.count).utf8)
        body.append(contentsOf: #","diagnostics":["#.utf8)
        let start = body.count
        for (position, diagnostic) in diagnostics.enumerated() {
            if position > 0 {
                // The first diagnostic is always kept; later ones only while the list is within the bound.
                guard body.count - start < maxDiagnosticBytes else { break }
                body.append(UInt8(ascii: ","))
            }
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
