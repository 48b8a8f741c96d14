import FlowmeterModels
import FlowmeterWire
import Foundation
import Gzip

/// The request bodies of the ingest benchmark, built once: the distinct batch set (the synthetic batches, plain with
/// their ids, which the load generator rewrites on every send, and gzipped without ids) and the repeated set (one
/// batch without an id, the same bytes on every send).
struct IngestBodies {
    var distinctPlain: [[UInt8]]
    var distinctGzip: [[UInt8]]
    var repeatedPlain: [UInt8]
    var repeatedGzip: [UInt8]

    init(count: Int, repeatedBytes: Int) throws {
        distinctPlain = SyntheticBatches.batches(count: count, seed: 7)
        // Gzip bodies cannot be patched per request, so they carry no batch id (it is optional). Either way no request
        // looks like a retry of another.
        // Sorted keys: the same bytes in every run (dictionary order is seeded per process).
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let withoutID = try distinctPlain.map { body in
            var batch = try FastBatchDecoder.decode(body).batch
            batch.id = nil
            return Array(try encoder.encode(batch))
        }
        distinctGzip = withoutID.map { Gzip.compress($0) }
        repeatedPlain = withoutID.min { abs($0.count - repeatedBytes) < abs($1.count - repeatedBytes) } ?? []
        repeatedGzip = Gzip.compress(repeatedPlain)
    }

    /// One line that says what was built.
    var description: String {
        let average = { (bodies: [[UInt8]]) in bodies.isEmpty ? 0 : bodies.reduce(0) { $0 + $1.count } / bodies.count }
        return "batches: distinct = \(distinctPlain.count) batches of 50 events, \(average(distinctPlain)) bytes on "
            + "average (\(average(distinctGzip)) gzip); repeated = one 50-event batch without id, "
            + "\(repeatedPlain.count) bytes (\(repeatedGzip.count) gzip)"
    }

    /// The prepared HTTP requests of one encoding and batch set for a collector on `port`.
    func requests(port: UInt16, key: String, encoding: String, batches: String) -> [LoadGenerator.Request] {
        switch (encoding, batches) {
        case ("gzip", "repeated"):
            return [
                LoadGenerator.Request(bytes: Self.httpRequest(port: port, key: key, body: repeatedGzip, gzip: true))
            ]
        case ("gzip", _):
            return distinctGzip.map {
                LoadGenerator.Request(bytes: Self.httpRequest(port: port, key: key, body: $0, gzip: true))
            }
        case (_, "repeated"):
            return [
                LoadGenerator.Request(bytes: Self.httpRequest(port: port, key: key, body: repeatedPlain, gzip: false))
            ]
        default:
            return distinctPlain.map { Self.plainRequest(port: port, key: key, body: $0) }
        }
    }

    /// A plain request whose batch id the load generator rewrites on every send.
    static func plainRequest(port: UInt16, key: String, body: [UInt8]) -> LoadGenerator.Request {
        let bytes = httpRequest(port: port, key: key, body: body, gzip: false)
        var range: Range<Int>?
        if let id = try? FastBatchDecoder.decode(body).batch.id, id.utf8.count == 36 {
            let needle = Array("\"id\":\"\(id)\"".utf8)
            if let start = firstIndex(of: needle, in: bytes) {
                range = (start + 6)..<(start + 6 + 36)
            }
        }
        return LoadGenerator.Request(bytes: bytes, events: 50, batchIDRange: range)
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }

    static func httpRequest(port: UInt16, key: String, body: [UInt8], gzip: Bool) -> [UInt8] {
        var head = "POST /v1/diagnostics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(key)\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        if gzip { head += "Content-Encoding: gzip\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
