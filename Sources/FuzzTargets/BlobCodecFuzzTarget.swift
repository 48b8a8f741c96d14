import RollupStore
import Rollups

/// The store's compact binary form for releases, samples and registered types (`RollupBlobCodec`), which every
/// read of a series or version row decodes.
///
/// Invariants, for each of the three kinds of blob:
/// - The input as a stored blob: decoding never crashes (a corrupt blob is an error, not a trap). Whatever decodes
///   re-encodes to bytes that decode to the same value, string for string by UTF-8 bytes, and re-encoding that gives
///   the same bytes again (the encoding is canonical).
/// - The input as a seed for values a rollup can hold: each encodes and decodes back to itself.
package enum BlobCodecFuzzTarget: FuzzTarget {
    package static let name = "blob-codec"

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        if let releases = try? RollupBlobCodec.decodeReleases(input) {
            try checkReleases(releases, source: "decoded")
        }
        if let samples = try? RollupBlobCodec.decodeSamples(input) {
            try checkSamples(samples, source: "decoded")
        }
        if let strings = try? RollupBlobCodec.decodeStrings(input) {
            try checkStrings(strings, source: "decoded")
        }
        var source = FuzzInput(input)
        var releases: [String: Int64] = [:]
        for _ in 0..<(source.byte() % 24) { releases[source.string()] = source.int64() }
        try checkReleases(releases, source: "generated")
        var samples: [RollupSample] = []
        for _ in 0..<(source.byte() % 6) {
            samples.append(
                RollupSample(
                    codingPath: source.optionalString(), message: source.optionalString(),
                    pageID: source.optionalString()))
        }
        try checkSamples(samples, source: "generated")
        var strings: Set<String> = []
        for _ in 0..<(source.byte() % 12) { strings.insert(source.string()) }
        try checkStrings(strings, source: "generated")
    }

    private static func checkReleases(_ releases: [String: Int64], source: String) throws(FuzzFailure) {
        let bytes = RollupBlobCodec.encode(releases: releases)
        let decoded: [String: Int64]
        do {
            decoded = try RollupBlobCodec.decodeReleases(bytes)
        } catch {
            throw FuzzFailure("\(source) releases: their blob does not decode: \(error); \(show(bytes))")
        }
        try require(exact(decoded) == exact(releases), "\(source) releases: \(releases) read back as \(decoded)")
        try require(
            RollupBlobCodec.encode(releases: decoded) == bytes, "\(source) releases: re-encoding changes the bytes")
    }

    private static func checkSamples(_ samples: [RollupSample], source: String) throws(FuzzFailure) {
        let bytes = RollupBlobCodec.encode(samples: samples)
        let decoded: [RollupSample]
        do {
            decoded = try RollupBlobCodec.decodeSamples(bytes)
        } catch {
            throw FuzzFailure("\(source) samples: their blob does not decode: \(error); \(show(bytes))")
        }
        try require(exact(decoded) == exact(samples), "\(source) samples: \(samples) read back as \(decoded)")
        try require(
            RollupBlobCodec.encode(samples: decoded) == bytes, "\(source) samples: re-encoding changes the bytes")
    }

    private static func checkStrings(_ strings: Set<String>, source: String) throws(FuzzFailure) {
        let bytes = RollupBlobCodec.encode(strings: strings)
        let decoded: Set<String>
        do {
            decoded = try RollupBlobCodec.decodeStrings(bytes)
        } catch {
            throw FuzzFailure("\(source) strings: their blob does not decode: \(error); \(show(bytes))")
        }
        try require(
            Set(decoded.map { Array($0.utf8) }) == Set(strings.map { Array($0.utf8) }),
            "\(source) strings: \(strings) read back as \(decoded)")
        try require(
            RollupBlobCodec.encode(strings: decoded) == bytes, "\(source) strings: re-encoding changes the bytes")
    }

    private static func exact(_ releases: [String: Int64]) -> [[UInt8]: Int64] {
        var result: [[UInt8]: Int64] = [:]
        for (release, events) in releases { result[Array(release.utf8)] = events }
        return result
    }

    private static func exact(_ samples: [RollupSample]) -> [[[UInt8]?]] {
        samples.map {
            [Array($0.codingPath.utf8), $0.message.map { Array($0.utf8) }, $0.pageID.map { Array($0.utf8) }]
        }
    }
}
