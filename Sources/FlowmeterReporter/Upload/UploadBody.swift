import FlowmeterModels

/// The request body of one batch (docs/api.md#ingest), spliced from the batch file's JSON without re-encoding events.
enum UploadBody {
    static func make(id: String, sentAt: Timestamp, batch: StoredBatch) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(batch.client.count + batch.events.reduce(0) { $0 + $1.json.count + 16 } + 200)
        append(#"{"id":"#, to: &body)
        JSONText.append(id, to: &body)
        append(#","sentAt":""#, to: &body)
        sentAt.appendRFC3339(to: &body)
        append(#"","client":"#, to: &body)
        body += batch.client
        if batch.decodes > 0 {
            append(#","decodes":"#, to: &body)
            BatchFileFormat.appendInt(batch.decodes, to: &body)
        }
        append(#","events":["#, to: &body)
        for (index, event) in batch.events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            // The stored JSON is an object without "count": drop its '}' and close it with the count.
            body += event.json.dropLast()
            append(#","count":"#, to: &body)
            BatchFileFormat.appendInt(event.count, to: &body)
            body.append(UInt8(ascii: "}"))
        }
        body.append(UInt8(ascii: "]"))
        if !batch.report.isEmpty {
            append(#","clientReport":{"discarded":["#, to: &body)
            for (index, entry) in batch.report.entries.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                append(#"{"reason":""#, to: &body)
                append(entry.reason.rawValue, to: &body)
                append(#"","events":"#, to: &body)
                BatchFileFormat.appendInt(entry.count, to: &body)
                body.append(UInt8(ascii: "}"))
            }
            append("]}", to: &body)
        }
        body.append(UInt8(ascii: "}"))
        return body
    }

    private static func append(_ text: String, to body: inout [UInt8]) {
        body += text.utf8
    }
}
