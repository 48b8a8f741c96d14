import FlowmeterModels

/// The lines of a batch file: append-only, one record per line, so a kill can at worst tear the last line.
///
/// ```
/// H{"appID":…}            the client, first line, as JSON
/// E3 {"kind":…}           a new event, its count (3), its JSON without "count"
/// C0 2                    event 0 (in E order) seen 2 more times (pre-aggregation)
/// D5                      5 more page decodes
/// Rqueue_overflow 12      a clientReport entry riding on this batch
/// A                       an attempt has started: the body is fixed from here on
/// ```
/// A line without its newline (torn by a kill) and lines of another capital letter (a newer SDK's) are ignored when
/// reading. Any other line that does not read back (damaged on disk: an event that is not one JSON object in valid
/// UTF-8, a count that is not a number, an increment of an event that did not read back, a line that starts with
/// anything but a capital letter) is left out and its occurrences counted as `corrupt`.
enum BatchFileFormat {
    static let newline = UInt8(ascii: "\n")

    /// The header line for `client`.
    static func header(clientJSON: [UInt8]) -> [UInt8] {
        var line: [UInt8] = [UInt8(ascii: "H")]
        line.reserveCapacity(clientJSON.count + 2)
        line += clientJSON
        line.append(newline)
        return line
    }

    /// Appends the line of a new event seen `count` times, its strings cut to the contract's limits.
    static func appendEvent(_ event: DiagnosticEvent, count: Int, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "E"))
        appendInt(count, to: &line)
        line.append(UInt8(ascii: " "))
        line.append(UInt8(ascii: "{"))
        var first = true
        func key(_ name: StaticString) {
            if !first { line.append(UInt8(ascii: ",")) }
            first = false
            line.append(UInt8(ascii: "\""))
            line.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            line.append(UInt8(ascii: "\""))
            line.append(UInt8(ascii: ":"))
        }
        func string(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            JSONText.append(value, to: &line)
        }
        string("id", event.id)
        string("kind", event.kind.rawValue)
        string("widgetType", event.widgetType)
        string("codingPath", event.codingPath)
        string("message", event.message)
        string("pageID", event.pageID)
        string("surface", event.surface)
        string("backendRelease", event.backendRelease)
        key("occurredAt")
        line.append(UInt8(ascii: "\""))
        event.occurredAt.appendRFC3339(to: &line)
        line.append(UInt8(ascii: "\""))
        line.append(UInt8(ascii: "}"))
        line.append(newline)
    }

    /// Appends the line adding `count` occurrences to event `index`.
    static func appendIncrement(index: Int, count: Int, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "C"))
        appendInt(index, to: &line)
        line.append(UInt8(ascii: " "))
        appendInt(count, to: &line)
        line.append(newline)
    }

    /// Appends the line adding `count` page decodes.
    static func appendDecodes(_ count: Int, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "D"))
        appendInt(count, to: &line)
        line.append(newline)
    }

    /// Appends the lines of a client report.
    static func appendReport(_ report: DiscardCounts, to line: inout [UInt8]) {
        for (reason, count) in report.entries {
            line.append(UInt8(ascii: "R"))
            line += Array(reason.rawValue.utf8)
            line.append(UInt8(ascii: " "))
            appendInt(count, to: &line)
            line.append(newline)
        }
    }

    /// Appends the line saying an attempt has started.
    static func appendAttempted(to line: inout [UInt8]) {
        line.append(UInt8(ascii: "A"))
        line.append(newline)
    }

    /// The file bytes of `batch`, as a fresh file (the halves of a split, a batch rewritten without damaged lines).
    static func file(of batch: StoredBatch) -> [UInt8] {
        var bytes = header(clientJSON: batch.client)
        for event in batch.events {
            bytes.append(UInt8(ascii: "E"))
            appendInt(event.count, to: &bytes)
            bytes.append(UInt8(ascii: " "))
            bytes += event.json
            bytes.append(newline)
        }
        if batch.decodes > 0 { appendDecodes(batch.decodes, to: &bytes) }
        appendReport(batch.report, to: &bytes)
        if batch.isAttempted { appendAttempted(to: &bytes) }
        return bytes
    }

    /// Reads a batch file; nil when it has no complete header line that reads back (nothing can be sent without
    /// the client).
    static func parse(_ bytes: [UInt8]) -> StoredBatch? {
        let (hasClient, batch) = parseLines(bytes)
        return hasClient ? batch : nil
    }

    /// Reads a batch file, also without a header that reads back (its `client` is then empty), so that what such a
    /// file held is still counted when it is dropped.
    static func parseLines(_ bytes: [UInt8]) -> (hasClient: Bool, batch: StoredBatch) {
        var client: [UInt8]?
        // Every E line keeps its place, read back or not, so that C lines find their event by position.
        var events: [StoredBatch.Event?] = []
        var decodes = 0
        var report = DiscardCounts()
        var isAttempted = false
        var corrupt = 0
        var start = 0
        func damaged(_ count: Int?) {
            corrupt = min(Int(Int32.max), corrupt + max(1, count ?? 1))
        }
        while let end = bytes[start...].firstIndex(of: newline) {
            let line = bytes[start..<end]
            start = end + 1
            guard let type = line.first else { continue }
            let rest = line.dropFirst()
            switch type {
            case UInt8(ascii: "H") where client == nil:
                if JSONValidator.isObject(rest) { client = Array(rest) }
            case UInt8(ascii: "E"):
                let space = rest.firstIndex(of: UInt8(ascii: " "))
                let count = space.flatMap { parseInt(rest[..<$0]) }
                guard let space, let count, count >= 1, JSONValidator.isObject(rest[(space + 1)...]),
                    rest[space + 1] == UInt8(ascii: "{"), rest.last == UInt8(ascii: "}")
                else {
                    damaged(count)
                    events.append(nil)
                    continue
                }
                events.append(StoredBatch.Event(json: Array(rest[(space + 1)...]), count: count))
            case UInt8(ascii: "C"):
                let space = rest.firstIndex(of: UInt8(ascii: " "))
                let count = space.flatMap { parseInt(rest[($0 + 1)...]) }
                guard let space, let index = parseInt(rest[..<space]), let count, count >= 1,
                    events.indices.contains(index), let event = events[index]
                else {
                    damaged(count)
                    continue
                }
                events[index] = StoredBatch.Event(json: event.json, count: min(Int(Int32.max), event.count + count))
            case UInt8(ascii: "D"):
                if let count = parseInt(rest) { decodes = min(Int(Int32.max), decodes + count) }
            case UInt8(ascii: "R"):
                guard let space = rest.firstIndex(of: UInt8(ascii: " ")),
                    let reason = DiscardReason(rawValue: String(decoding: rest[..<space], as: UTF8.self)),
                    let count = parseInt(rest[(space + 1)...])
                else { continue }
                report.add(count, for: reason)
            case UInt8(ascii: "A"):
                isAttempted = true
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                continue
            default:
                damaged(nil)
            }
        }
        // A file an older SDK wrote has no A line: it wrote the report at the first attempt.
        let batch = StoredBatch(
            client: client ?? [], events: events.compactMap { $0 }, decodes: decodes, report: report,
            isAttempted: isAttempted || !report.isEmpty, corrupt: corrupt)
        return (client != nil, batch)
    }

    static func parseInt(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= 48 && digit <= 57 else { return nil }
            value = value * 10 + Int(digit - 48)
        }
        return value
    }

    /// Appends a non-negative decimal without going through `String`.
    static func appendInt(_ value: Int, to bytes: inout [UInt8]) {
        precondition(value >= 0, "negative counts are never written")
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
