import FlowmeterModels
import FlowmeterWire
import Foundation
import Rollups

/// What the sink decodes from Kafka: ``PartialRollup`` (`flowmeter.rollups.v1`) and ``DeployMarker``
/// (`flowmeter.deploys.v1`) message values, and what the collector writes into them.
///
/// Invariants:
/// - The input as a message value: decoding never crashes. A partial rollup that decodes re-encodes (with
///   ``PartialRollupJSONWriter`` and with the `Codable` reference) to bytes that decode to the same value, string
///   for string by UTF-8 bytes; its Kafka key can be made; and it merges with itself, which the store does when a
///   second partial of the same series and minute arrives, without trapping. A deploy marker that decodes re-encodes
///   and decodes to itself.
/// - The input as a seed for values the collector can build (identifiers that pass ``IdentifierRule``, any free text,
///   any counts, times between the years 0000 and 9999): each encodes and decodes back to itself through both
///   encoders.
package enum RollupWireFuzzTarget: FuzzTarget {
    package static let name = "rollup-wire"

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        if let partial = try? PartialRollup(jsonBytes: input) {
            try checkRoundTrip(partial, source: "decoded partial")
            _ = partial.kafkaKey
            try checkSelfMerge(partial)
        }
        if let marker = try? DeployMarker(jsonBytes: input) {
            try checkRoundTrip(marker, source: "decoded deploy marker")
        }
        var source = FuzzInput(input)
        try checkRoundTrip(makePartial(&source), source: "generated partial")
        try checkRoundTrip(makeMarker(&source), source: "generated deploy marker")
    }

    private static func checkRoundTrip(_ partial: PartialRollup, source: String) throws(FuzzFailure) {
        let expected = ExactRollup(partial)
        for (writer, bytes) in [("writer", partial.jsonBytes()), ("codable", partial.codableJSONBytes())] {
            let decoded: PartialRollup
            do throws(RollupsError) {
                decoded = try PartialRollup(jsonBytes: bytes)
            } catch {
                throw FuzzFailure("\(source): the \(writer) bytes do not decode: \(error.message); \(show(bytes))")
            }
            try require(
                ExactRollup(decoded) == expected && decoded == partial,
                "\(source): the \(writer) bytes decode to \(decoded), not \(partial)")
        }
    }

    private static func checkRoundTrip(_ marker: DeployMarker, source: String) throws(FuzzFailure) {
        let bytes = marker.jsonBytes()
        let decoded: DeployMarker
        do throws(RollupsError) {
            decoded = try DeployMarker(jsonBytes: bytes)
        } catch {
            throw FuzzFailure("\(source): its bytes do not decode: \(error.message); \(show(bytes))")
        }
        try require(exactlyEqual(decoded, marker), "\(source): decodes to \(decoded), not \(marker)")
    }

    private static func checkSelfMerge(_ partial: PartialRollup) throws(FuzzFailure) {
        switch partial.rollup {
        case .series(let rollup):
            var merged = rollup
            merged.merge(rollup)
            try require(merged.events >= rollup.events, "merging a series rollup with itself lost events")
        case .version(let rollup):
            var merged = rollup
            merged.merge(rollup)
            try require(merged.batches >= rollup.batches, "merging a version rollup with itself lost batches")
        }
    }

    // MARK: - Values from the input

    /// Seconds of the years 0000–9999 (what RFC 3339 with four-digit years can spell).
    static let timestampSeconds: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    static func makeTimestamp(_ source: inout FuzzInput) -> Timestamp {
        Timestamp(
            secondsSinceEpoch: source.int(in: timestampSeconds),
            nanoseconds: Int32(source.int(in: 0...999_999_999)))
    }

    static func makeSketch(_ source: inout FuzzInput) -> HyperLogLog {
        var sketch = HyperLogLog()
        // Up to 765 installs, enough to cross from the sparse to the dense form at 512.
        let count = Int(source.byte()) * 3
        // Distinct, well-spread hashes from one seed.
        var hashes = SeededRandom(seed: source.uint64())
        for _ in 0..<count { sketch.insert(hash: hashes.next()) }
        return sketch
    }

    static func makePartial(_ source: inout FuzzInput) -> PartialRollup {
        let id = source.identifier()
        let collector = source.identifier()
        let window = MinuteWindow(start: source.int(in: (Int64.min / 60)...(Int64.max / 60)) * 60)
        let key = VersionKey(
            appID: source.identifier(), platform: source.identifier(), appVersion: source.identifier(),
            buildConfiguration: source.bool() ? .debug : .release)
        if source.bool() {
            let series = RollupSeries(
                version: key, kind: DiagnosticKind(rawValue: source.identifier()) ?? .unknownType,
                widgetType: source.optionalIdentifier())
            let times = [makeTimestamp(&source), makeTimestamp(&source)].sorted()
            var releases: [String: Int64] = [:]
            for _ in 0..<(source.byte() % 20) { releases[source.string()] = source.int(in: 0...Int64.max) }
            var samples: [RollupSample] = []
            for _ in 0..<(source.byte() % 6) {
                samples.append(
                    RollupSample(
                        codingPath: source.optionalString(), message: source.optionalString(),
                        pageID: source.optionalString()))
            }
            let rollup = SeriesRollup(
                series: series, window: window, events: source.int(in: 0...Int64.max),
                installs: makeSketch(&source), firstSeen: times[0], lastSeen: times[1], releases: releases,
                samples: samples)
            return PartialRollup(id: id, collector: collector, rollup: .series(rollup))
        }
        var types: Set<String> = []
        for _ in 0..<(source.byte() % 8) { types.insert(source.identifier()) }
        let rollup = VersionRollup(
            key: key, window: window, batches: source.int(in: 0...Int64.max),
            cleanBatches: source.int(in: 0...Int64.max), decodes: source.int(in: 0...Int64.max),
            installs: makeSketch(&source), registeredTypes: types,
            maxSchemaVersion: source.bool() ? Int(source.int64()) : nil,
            clientDiscarded: source.int(in: 0...Int64.max))
        return PartialRollup(id: id, collector: collector, rollup: .version(rollup))
    }

    static func makeMarker(_ source: inout FuzzInput) -> DeployMarker {
        DeployMarker(
            id: source.identifier(), service: source.identifier(), version: source.identifier(),
            environment: source.optionalIdentifier(), startedAt: source.bool() ? makeTimestamp(&source) : nil,
            finishedAt: makeTimestamp(&source), commit: source.optionalIdentifier(), url: source.optionalString())
    }
}

/// A partial rollup with every string as its UTF-8 bytes: equal only when the values are the same byte for byte
/// (`String`'s `==` calls canonically equivalent spellings equal, SQL and Kafka do not).
struct ExactRollup: Equatable {
    var strings: [[UInt8]] = []
    var numbers: [Int64] = []
    var timestamps: [Timestamp] = []
    var installs: [UInt8] = []
    var releases: [[UInt8]: Int64] = [:]
    var samples: [[[UInt8]?]] = []
    var registeredTypes: Set<[UInt8]> = []
    var maxSchemaVersion: Int?

    init(_ partial: PartialRollup) {
        strings = [partial.id, partial.collector].map { Array($0.utf8) }
        numbers = [partial.rollup.window.start]
        switch partial.rollup {
        case .series(let rollup):
            let series = rollup.series
            strings += [
                series.appID, series.platform, series.appVersion, series.buildConfiguration.rawValue,
                series.kind.rawValue, series.widgetType,
            ].map { Array($0.utf8) }
            numbers.append(rollup.events)
            timestamps = [rollup.firstSeen, rollup.lastSeen]
            installs = rollup.installs.serialized()
            for (release, events) in rollup.releases { releases[Array(release.utf8)] = events }
            samples = rollup.samples.map { sample in
                [
                    Array(sample.codingPath.utf8), sample.message.map { Array($0.utf8) },
                    sample.pageID.map { Array($0.utf8) },
                ]
            }
        case .version(let rollup):
            let key = rollup.key
            strings += [key.appID, key.platform, key.appVersion, key.buildConfiguration.rawValue].map { Array($0.utf8) }
            numbers += [rollup.batches, rollup.cleanBatches, rollup.decodes, rollup.clientDiscarded]
            installs = rollup.installs.serialized()
            registeredTypes = Set(rollup.registeredTypes.map { Array($0.utf8) })
            maxSchemaVersion = rollup.maxSchemaVersion
        }
    }
}
