import FlowmeterModels
import FlowmeterWire

/// Writes ``PartialRollup/jsonBytes()`` straight into bytes, in the shape `JSONEncoder` gives the Codable form
/// (`WireForm` in `PartialRollup+Wire.swift`, the reference): keys sorted, absent optionals left out.
///
/// A collector flushes one message per series and minute; `JSONEncoder` spent most of that flush building its
/// intermediate tree. Tests decode both spellings to the same value.
enum PartialRollupJSONWriter {
    static func bytes(of partial: PartialRollup) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1_024)
        out.append(contentsOf: #"{"collector":"#.utf8)
        JSONString.append(partial.collector, to: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONString.append(partial.id, to: &out)
        out.append(contentsOf: #","rollup":"#.utf8)
        switch partial.rollup {
        case .series(let series):
            append(series, to: &out)
            out.append(contentsOf: #","type":"series"}"#.utf8)
        case .version(let version):
            append(version, to: &out)
            out.append(contentsOf: #","type":"version"}"#.utf8)
        }
        return out
    }

    private static func append(_ rollup: SeriesRollup, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"events":"#.utf8)
        appendInteger(rollup.events, to: &out)
        out.append(contentsOf: #","firstSeen":"#.utf8)
        appendTimestamp(rollup.firstSeen, to: &out)
        out.append(contentsOf: #","installs":"#.utf8)
        appendBase64(rollup.installs.serialized(), to: &out)
        out.append(contentsOf: #","lastSeen":"#.utf8)
        appendTimestamp(rollup.lastSeen, to: &out)
        out.append(contentsOf: #","releases":{"#.utf8)
        // Sorted as `.sortedKeys` sorts them, so the bytes do not depend on the dictionary's order.
        for (offset, name) in rollup.releases.keys.sorted().enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.append(name, to: &out)
            out.append(UInt8(ascii: ":"))
            appendInteger(rollup.releases[name] ?? 0, to: &out)
        }
        out.append(contentsOf: #"},"samples":["#.utf8)
        for (offset, sample) in rollup.samples.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"codingPath":"#.utf8)
            JSONString.append(sample.codingPath, to: &out)
            if let message = sample.message {
                out.append(contentsOf: #","message":"#.utf8)
                JSONString.append(message, to: &out)
            }
            if let pageID = sample.pageID {
                out.append(contentsOf: #","pageID":"#.utf8)
                JSONString.append(pageID, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #"],"series":{"appID":"#.utf8)
        let series = rollup.series
        JSONString.append(series.appID, to: &out)
        out.append(contentsOf: #","appVersion":"#.utf8)
        JSONString.append(series.appVersion, to: &out)
        out.append(contentsOf: #","buildConfiguration":"#.utf8)
        JSONString.append(series.buildConfiguration.rawValue, to: &out)
        out.append(contentsOf: #","kind":"#.utf8)
        JSONString.append(series.kind.rawValue, to: &out)
        out.append(contentsOf: #","platform":"#.utf8)
        JSONString.append(series.platform, to: &out)
        out.append(contentsOf: #","widgetType":"#.utf8)
        JSONString.append(series.widgetType, to: &out)
        out.append(contentsOf: #"},"window":"#.utf8)
        appendInteger(rollup.window.start, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func append(_ rollup: VersionRollup, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"batches":"#.utf8)
        appendInteger(rollup.batches, to: &out)
        out.append(contentsOf: #","builds":{"#.utf8)
        for (offset, build) in rollup.builds.keys.sorted().enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            let traffic = rollup.builds[build] ?? VersionBuildTraffic()
            JSONString.append(build, to: &out)
            out.append(contentsOf: #":{"batches":"#.utf8)
            appendInteger(traffic.batches, to: &out)
            out.append(contentsOf: #","lastSeen":"#.utf8)
            appendInteger(traffic.lastSeen, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #"},"cleanBatches":"#.utf8)
        appendInteger(rollup.cleanBatches, to: &out)
        out.append(contentsOf: #","clientDiscarded":"#.utf8)
        appendInteger(rollup.clientDiscarded, to: &out)
        out.append(contentsOf: #","decodes":"#.utf8)
        appendInteger(rollup.decodes, to: &out)
        out.append(contentsOf: #","installs":"#.utf8)
        appendBase64(rollup.installs.serialized(), to: &out)
        out.append(contentsOf: #","key":{"appID":"#.utf8)
        let key = rollup.key
        JSONString.append(key.appID, to: &out)
        out.append(contentsOf: #","appVersion":"#.utf8)
        JSONString.append(key.appVersion, to: &out)
        out.append(contentsOf: #","buildConfiguration":"#.utf8)
        JSONString.append(key.buildConfiguration.rawValue, to: &out)
        out.append(contentsOf: #","platform":"#.utf8)
        JSONString.append(key.platform, to: &out)
        out.append(UInt8(ascii: "}"))
        if let maxSchemaVersion = rollup.maxSchemaVersion {
            out.append(contentsOf: #","maxSchemaVersion":"#.utf8)
            appendInteger(Int64(maxSchemaVersion), to: &out)
        }
        out.append(contentsOf: #","registeredTypes":["#.utf8)
        for (offset, type) in rollup.registeredTypes.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.append(type, to: &out)
        }
        out.append(contentsOf: #"],"releases":{"#.utf8)
        for (offset, name) in rollup.releases.keys.sorted().enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            let traffic = rollup.releases[name] ?? VersionReleaseTraffic()
            JSONString.append(name, to: &out)
            out.append(contentsOf: #":{"batches":"#.utf8)
            appendInteger(traffic.batches, to: &out)
            out.append(contentsOf: #","decodes":"#.utf8)
            appendInteger(traffic.decodes, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #"},"window":"#.utf8)
        appendInteger(rollup.window.start, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func appendTimestamp(_ timestamp: Timestamp, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        timestamp.appendRFC3339(to: &out)
        out.append(UInt8(ascii: "\""))
    }

    private static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        // Through the magnitude, so Int64.min has no positive counterpart to overflow into.
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits at most (UInt64.max), written backwards into 24 bytes.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
        }
        withUnsafeBytes(of: &digits) { buffer in
            for position in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[position]) }
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Standard base64 with padding, as `Data.base64EncodedString()` spells it, quoted.
    private static func appendBase64(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4 + 1)
        var position = 0
        while position + 3 <= bytes.count {
            let chunk = UInt32(bytes[position]) << 16 | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2])
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
            out.append(alphabet[Int(chunk & 63)])
            position += 3
        }
        let rest = bytes.count - position
        if rest > 0 {
            let chunk = UInt32(bytes[position]) << 16 | (rest == 2 ? UInt32(bytes[position + 1]) << 8 : 0)
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(rest == 2 ? alphabet[Int(chunk >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        out.append(UInt8(ascii: "\""))
    }
}
