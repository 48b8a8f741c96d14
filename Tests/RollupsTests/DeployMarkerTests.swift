import FlowmeterModels
import Foundation
import Testing

@testable import Rollups

@Suite struct DeployMarkerTests {
    static let contractExample = #"""
        {"service": "page-api", "version": "2026.11.30-2", "environment": "production",
         "startedAt": "2026-11-30T08:40:00Z", "finishedAt": "2026-11-30T08:44:10Z",
         "commit": "9f2c1ab", "url": "https://ci.example.com/builds/1234"}
        """#

    @Test func decodesTheContractExample() throws {
        let marker = try DeployMarker(jsonBytes: Array(Self.contractExample.utf8))
        #expect(marker.service == "page-api")
        #expect(marker.version == "2026.11.30-2")
        #expect(marker.release == "page-api@2026.11.30-2")
        #expect(marker.environment == "production")
        #expect(marker.startedAt == Timestamp(rfc3339: "2026-11-30T08:40:00Z"))
        #expect(marker.finishedAt == Timestamp(rfc3339: "2026-11-30T08:44:10Z"))
        #expect(marker.commit == "9f2c1ab")
        #expect(marker.url == "https://ci.example.com/builds/1234")
        #expect(!marker.id.isEmpty)
    }

    @Test func roundTripsWithItsID() throws {
        let marker = DeployMarker(
            id: "d-1", service: "page-api", version: "1", finishedAt: Timestamp(secondsSinceEpoch: 1_764_492_250))
        let bytes = marker.jsonBytes()
        #expect(try DeployMarker(jsonBytes: bytes) == marker)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("commit"))
    }

    @Test func markersWithoutAnIDGetDistinctOnes() throws {
        let minimal = #"{"service":"s","version":"v","finishedAt":"2026-11-30T08:44:10Z"}"#
        let first = try DeployMarker(jsonBytes: Array(minimal.utf8))
        let second = try DeployMarker(jsonBytes: Array(minimal.utf8))
        #expect(first.id != second.id)
        #expect(first.startedAt == nil && first.environment == nil)
    }

    @Test(arguments: [
        (#"{"version":"v","finishedAt":"2026-11-30T08:44:10Z"}"#, "Missing key 'service'"),
        (#"{"service":"s","finishedAt":"2026-11-30T08:44:10Z"}"#, "Missing key 'version'"),
        (#"{"service":"s","version":"v"}"#, "Missing key 'finishedAt'"),
        (#"{"service":"","version":"v","finishedAt":"2026-11-30T08:44:10Z"}"#, "Empty value for 'service'"),
        (#"{"service":null,"version":"v","finishedAt":"2026-11-30T08:44:10Z"}"#, "Empty value for 'service'"),
        (#"{"service":"s","version":" ","finishedAt":"2026-11-30T08:44:10Z"}"#, "Empty value for 'version'"),
        (#"{"service":"s\u0000","version":"v","finishedAt":"2026-11-30T08:44:10Z"}"#, "Control character in 'service'"),
        (
            #"{"service":"s","version":"v","environment":"p\u001b[2J","finishedAt":"2026-11-30T08:44:10Z"}"#,
            "Control character in 'environment'"
        ),
        (#"{"service":"s","version":"v","finishedAt":"yesterday"}"#, "Invalid RFC 3339 time 'yesterday'"),
        (#"{"service":5,"version":"v","finishedAt":"2026-11-30T08:44:10Z"}"#, "service"),
        ("not json", "not valid JSON"),
    ])
    func invalidMarkersExplainThemselves(json: String, expected: String) {
        do {
            _ = try DeployMarker(jsonBytes: Array(json.utf8))
            Issue.record("decoded \(json)")
        } catch {
            #expect(error.code == .invalidDeployMarker)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }
}
