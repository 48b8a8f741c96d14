import FlowmeterModels
import FlowmeterWire
import Foundation
import Rollups

/// What the sink decodes from the deploys topic (`flowmeter.deploys.v1`): ``DeployMarker`` message values, and what
/// `flowmeter deploys add` writes into them.
///
/// Invariants:
/// - The input as a message value: decoding never crashes, and a marker that decodes re-encodes and decodes to
///   itself.
/// - The input as a seed for markers a user can record (identifiers that pass ``IdentifierRule``, any free text,
///   times between the years 0000 and 9999): each encodes and decodes back to itself.
package enum DeployMarkerFuzzTarget: FuzzTarget {
    package static let name = "deploy-marker"

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        if let marker = try? DeployMarker(jsonBytes: input) {
            try checkRoundTrip(marker, source: "decoded deploy marker")
        }
        var source = FuzzInput(input)
        try checkRoundTrip(makeMarker(&source), source: "generated deploy marker")
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

    // MARK: - Values from the input

    /// Seconds of the years 0000–9999 (what RFC 3339 with four-digit years can spell).
    static let timestampSeconds: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    static func makeTimestamp(_ source: inout FuzzInput) -> Timestamp {
        Timestamp(
            secondsSinceEpoch: source.int(in: timestampSeconds),
            nanoseconds: Int32(source.int(in: 0...999_999_999)))
    }

    static func makeMarker(_ source: inout FuzzInput) -> DeployMarker {
        DeployMarker(
            id: source.identifier(), service: source.identifier(), version: source.identifier(),
            environment: source.optionalIdentifier(), startedAt: source.bool() ? makeTimestamp(&source) : nil,
            finishedAt: makeTimestamp(&source), commit: source.optionalIdentifier(), url: source.optionalString())
    }
}
