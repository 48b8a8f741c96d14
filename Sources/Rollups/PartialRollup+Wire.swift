import FlowmeterModels
import FlowmeterWire
import Foundation

extension PartialRollup {
    /// The message value: `{"id", "collector", "type": "series"|"version", "rollup": {…}}`, with installs as the
    /// base64 of ``HyperLogLog/serialized()`` and times as RFC 3339.
    ///
    /// Not for the per-event path: a collector calls it once per series and minute per flush.
    public func jsonBytes() -> [UInt8] {
        PartialRollupJSONWriter.bytes(of: self)
    }

    /// The same message through `JSONEncoder` and the Codable form: the reference the byte writer is tested against.
    package func codableJSONBytes() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain value types into JSON cannot fail: no floats, no non-string keys.
        let data = try! encoder.encode(WireForm(self))
        return [UInt8](data)
    }

    /// Decodes a message value; anything that is not a valid partial rollup throws ``RollupsError``
    /// (`invalidPartialRollup`) naming the problem, never traps.
    public init(jsonBytes bytes: some Collection<UInt8>) throws(RollupsError) {
        let wire: WireForm
        do {
            wire = try JSONDecoder().decode(WireForm.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw RollupsError(.invalidPartialRollup, "Invalid partial rollup: \(error.summary)")
        } catch {
            throw RollupsError(.invalidPartialRollup, "Invalid partial rollup: \(error)")
        }
        self = wire.partial
    }

    /// The Kafka key: for a series, ``SeriesKey`` bytes (`["appID","kind","widgetType"]`, `null` for no widget type)
    /// then `|` and the window start; for a version, `["appID","platform","appVersion","buildConfiguration"]` then
    /// `|` and the window start.
    public var kafkaKey: [UInt8] {
        var key: [UInt8] = []
        switch rollup {
        case .series(let series):
            let type = series.series.widgetType
            SeriesKey.append(
                appID: series.series.appID, kind: series.series.kind, widgetType: type.isEmpty ? nil : type, to: &key)
        case .version(let version):
            key.append(UInt8(ascii: "["))
            let parts = [
                version.key.appID, version.key.platform, version.key.appVersion,
                version.key.buildConfiguration.rawValue,
            ]
            for (index, part) in parts.enumerated() {
                if index > 0 { key.append(UInt8(ascii: ",")) }
                JSONString.append(part, to: &key)
            }
            key.append(UInt8(ascii: "]"))
        }
        key.append(UInt8(ascii: "|"))
        key.append(contentsOf: String(rollup.window.start).utf8)
        return key
    }
}

/// The JSON shape of a partial rollup.
private struct WireForm: Codable {
    enum Kind: String, Codable {
        case series, version
    }

    enum CodingKeys: String, CodingKey {
        case id, collector, type, rollup
    }

    var partial: PartialRollup

    init(_ partial: PartialRollup) {
        self.partial = partial
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(String.self, forKey: .id)
        let collector = try container.decode(String.self, forKey: .collector)
        let rollup: PartialRollup.Rollup
        switch try container.decode(Kind.self, forKey: .type) {
        case .series:
            let series = try container.decode(SeriesRollup.self, forKey: .rollup)
            guard series.events >= 0, series.firstSeen <= series.lastSeen else {
                throw DecodingError.dataCorruptedError(
                    forKey: .rollup, in: container, debugDescription: "negative events or firstSeen after lastSeen")
            }
            rollup = .series(series)
        case .version:
            let version = try container.decode(VersionRollup.self, forKey: .rollup)
            guard version.batches >= 0, version.cleanBatches >= 0, version.decodes >= 0, version.clientDiscarded >= 0,
                version.releases.values.allSatisfy({ $0.batches >= 0 && $0.decodes >= 0 }),
                version.builds.values.allSatisfy({ $0.batches >= 0 && $0.lastSeen % 60 == 0 })
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .rollup, in: container, debugDescription: "negative counts or a build's minute unaligned")
            }
            rollup = .version(version)
        }
        // The rollups topic can be written by anything with access to the cluster: its strings are held to the
        // ingest rule before they reach a store (a widget type may be empty, meaning none).
        var identifiers = [id, collector]
        var widgetType = ""
        switch rollup {
        case .series(let series):
            identifiers += [series.series.appID, series.series.platform, series.series.appVersion]
            widgetType = series.series.widgetType
        case .version(let version):
            identifiers += [version.key.appID, version.key.platform, version.key.appVersion]
            identifiers += version.registeredTypes
            identifiers += version.releases.keys
            identifiers += version.builds.keys
        }
        if identifiers.contains(where: { !IdentifierRule.isValid($0) })
            || IdentifierRule.violation(in: widgetType) == .controlCharacter
        {
            throw DecodingError.dataCorruptedError(
                forKey: .rollup, in: container, debugDescription: "a string breaks the identifier rule")
        }
        partial = PartialRollup(id: id, collector: collector, rollup: rollup)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(partial.id, forKey: .id)
        try container.encode(partial.collector, forKey: .collector)
        switch partial.rollup {
        case .series(let series):
            try container.encode(Kind.series, forKey: .type)
            try container.encode(series, forKey: .rollup)
        case .version(let version):
            try container.encode(Kind.version, forKey: .type)
            try container.encode(version, forKey: .rollup)
        }
    }
}

extension DecodingError {
    /// The problem and where, in one line.
    var summary: String {
        func path(_ context: Context) -> String {
            context.codingPath.map { $0.intValue.map { "Index \($0)" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch self {
        case .keyNotFound(let key, let context):
            let at = path(context)
            return "missing key '\(key.stringValue)'" + (at.isEmpty ? "" : " at \(at)")
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let at = path(context)
            return context.debugDescription + (at.isEmpty ? "" : " at \(at)")
        @unknown default:
            return String(describing: self)
        }
    }
}
