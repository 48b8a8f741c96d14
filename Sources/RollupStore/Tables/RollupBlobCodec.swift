package import Rollups

/// The compact binary form the tables store releases, samples and registered types in.
///
/// Faster and smaller than JSON for the millions of rows a month of minute rollups holds. Layout: a version byte (1),
/// then a varint count, then per entry length-prefixed UTF-8 strings and zig-zag varints; an absent optional string
/// is a zero byte, a present one a one byte before it.
package enum RollupBlobCodec {
    static let version: UInt8 = 1

    package static func encode(releases: [String: Int64]) -> [UInt8] {
        var writer = BlobWriter()
        writer.varint(UInt64(releases.count))
        // Sorted so equal maps store equal bytes.
        for (release, events) in releases.sorted(by: { $0.key < $1.key }) {
            writer.string(release)
            writer.signed(events)
        }
        return writer.bytes
    }

    package static func decodeReleases(_ bytes: [UInt8]) throws -> [String: Int64] {
        var reader = try BlobReader(bytes)
        var releases: [String: Int64] = [:]
        for _ in 0..<(try reader.count()) {
            let release = try reader.string()
            releases[release] = try reader.signed()
        }
        return releases
    }

    /// A version rollup's traffic per backend release: per release (sorted) its name, batches and decodes.
    package static func encode(releaseTraffic: [String: VersionReleaseTraffic]) -> [UInt8] {
        var writer = BlobWriter()
        writer.varint(UInt64(releaseTraffic.count))
        for (release, traffic) in releaseTraffic.sorted(by: { $0.key < $1.key }) {
            writer.string(release)
            writer.signed(traffic.batches)
            writer.signed(traffic.decodes)
        }
        return writer.bytes
    }

    package static func decodeReleaseTraffic(_ bytes: [UInt8]) throws -> [String: VersionReleaseTraffic] {
        var reader = try BlobReader(bytes)
        var releases: [String: VersionReleaseTraffic] = [:]
        for _ in 0..<(try reader.count()) {
            let release = try reader.string()
            releases[release] = VersionReleaseTraffic(batches: try reader.signed(), decodes: try reader.signed())
        }
        return releases
    }

    /// A version rollup's builds: per build (sorted) its name, batches and the start of the last minute it was seen.
    package static func encode(buildTraffic: [String: VersionBuildTraffic]) -> [UInt8] {
        var writer = BlobWriter()
        writer.varint(UInt64(buildTraffic.count))
        for (build, traffic) in buildTraffic.sorted(by: { $0.key < $1.key }) {
            writer.string(build)
            writer.signed(traffic.batches)
            writer.signed(traffic.lastSeen)
        }
        return writer.bytes
    }

    package static func decodeBuildTraffic(_ bytes: [UInt8]) throws -> [String: VersionBuildTraffic] {
        var reader = try BlobReader(bytes)
        var builds: [String: VersionBuildTraffic] = [:]
        for _ in 0..<(try reader.count()) {
            let build = try reader.string()
            builds[build] = VersionBuildTraffic(batches: try reader.signed(), lastSeen: try reader.signed())
        }
        return builds
    }

    package static func encode(samples: [RollupSample]) -> [UInt8] {
        var writer = BlobWriter()
        writer.varint(UInt64(samples.count))
        for sample in samples {
            writer.string(sample.codingPath)
            writer.optionalString(sample.message)
            writer.optionalString(sample.pageID)
        }
        return writer.bytes
    }

    package static func decodeSamples(_ bytes: [UInt8]) throws -> [RollupSample] {
        var reader = try BlobReader(bytes)
        var samples: [RollupSample] = []
        for _ in 0..<(try reader.count()) {
            let path = try reader.string()
            let message = try reader.optionalString()
            let pageID = try reader.optionalString()
            var sample = RollupSample(codingPath: nil, message: message, pageID: pageID)
            // The path was normalized before it was stored; set it as is rather than normalizing twice.
            sample.codingPath = path
            samples.append(sample)
        }
        return samples
    }

    package static func encode(strings: Set<String>) -> [UInt8] {
        var writer = BlobWriter()
        writer.varint(UInt64(strings.count))
        for string in strings.sorted() { writer.string(string) }
        return writer.bytes
    }

    package static func decodeStrings(_ bytes: [UInt8]) throws -> Set<String> {
        var reader = try BlobReader(bytes)
        var strings = Set<String>()
        for _ in 0..<(try reader.count()) { strings.insert(try reader.string()) }
        return strings
    }
}

private struct BlobWriter {
    var bytes: [UInt8] = [RollupBlobCodec.version]

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func signed(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func string(_ string: String) {
        let utf8 = string.utf8
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func optionalString(_ string: String?) {
        guard let string else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        self.string(string)
    }
}

private struct BlobReader {
    private let bytes: [UInt8]
    private var offset = 1

    init(_ bytes: [UInt8]) throws {
        guard bytes.first == RollupBlobCodec.version else {
            throw RollupStoreError(
                .invalidData, "Stored rollup detail has unknown version \(bytes.first.map(String.init) ?? "none")")
        }
        self.bytes = bytes
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count, shift < 64 else { throw truncated() }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    mutating func count() throws -> Int {
        let count = try varint()
        guard count <= UInt64(bytes.count) else { throw truncated() }
        return Int(count)
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func string() throws -> String {
        let length = try count()
        guard offset + length <= bytes.count else { throw truncated() }
        defer { offset += length }
        return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
    }

    mutating func optionalString() throws -> String? {
        guard offset < bytes.count else { throw truncated() }
        offset += 1
        return bytes[offset - 1] == 0 ? nil : try string()
    }

    private func truncated() -> RollupStoreError {
        RollupStoreError(.invalidData, "Stored rollup detail is truncated or corrupt")
    }
}
