package import Rollups

/// The compact binary form the tables store releases, samples and registered types in.
///
/// Faster and smaller than JSON for the millions of rows a month of minute rollups holds. Layout: a version byte (1),
/// then a varint count, then per entry length-prefixed UTF-8 strings and zig-zag varints; an absent optional string
/// is a zero byte, a present one a one byte before it.
package enum RollupBlobCodec {
    static let version: UInt8 = 1

    package static func encode(releases: [String: Int64]) -> [UInt8] {
        var writer = BlobWriter(capacity: 11 + releases.keys.reduce(0) { $0 + 20 + $1.utf8.count })
        writer.varint(UInt64(releases.count))
        // Sorted so equal maps store equal bytes; one or two (the usual case) need no sorted copy.
        if releases.count <= 2 {
            var entries = releases.makeIterator()
            guard let first = entries.next() else { return writer.bytes }
            if let second = entries.next() {
                let (low, high) = second.key < first.key ? (second, first) : (first, second)
                writer.string(low.key)
                writer.signed(low.value)
                writer.string(high.key)
                writer.signed(high.value)
            } else {
                writer.string(first.key)
                writer.signed(first.value)
            }
            return writer.bytes
        }
        for (release, events) in releases.sorted(by: { $0.key < $1.key }) {
            writer.string(release)
            writer.signed(events)
        }
        return writer.bytes
    }

    package static func decodeReleases(_ bytes: [UInt8]) throws -> [String: Int64] {
        var reader = try BlobReader(bytes)
        let count = try reader.count()
        var releases = [String: Int64](minimumCapacity: count)
        for _ in 0..<count {
            let release = try reader.string()
            releases[release] = try reader.signed()
        }
        return releases
    }

    /// A version rollup's traffic per backend release: per release (sorted) its name, batches and decodes.
    package static func encode(releaseTraffic: [String: VersionReleaseTraffic]) -> [UInt8] {
        var writer = BlobWriter(capacity: 11 + releaseTraffic.keys.reduce(0) { $0 + 30 + $1.utf8.count })
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
        var writer = BlobWriter(capacity: 11 + buildTraffic.keys.reduce(0) { $0 + 30 + $1.utf8.count })
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
        var writer = BlobWriter(
            capacity: 11
                + samples.reduce(0) {
                    $0 + 30 + $1.codingPath.utf8.count + ($1.message?.utf8.count ?? 0) + ($1.pageID?.utf8.count ?? 0)
                })
        writer.varint(UInt64(samples.count))
        for sample in samples {
            writer.string(sample.codingPath)
            writer.optionalString(sample.message)
            writer.optionalString(sample.pageID)
        }
        return writer.bytes
    }

    package static func decodeSamples(_ bytes: [UInt8]) throws -> [RollupSample] {
        var isCanonical = true
        return try decodeSamples(bytes, isCanonical: &isCanonical)
    }

    /// ``decodeSamples(_:)``; `isCanonical` is set false unless encoding the samples gives `bytes` again.
    static func decodeSamples(_ bytes: [UInt8], isCanonical: inout Bool) throws -> [RollupSample] {
        var reader = try BlobReader(bytes)
        let count = try reader.count()
        var samples: [RollupSample] = []
        samples.reserveCapacity(count)
        defer { isCanonical = isCanonical && reader.isCanonicalAtEnd }
        for _ in 0..<count {
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
        var writer = BlobWriter(capacity: 11 + strings.reduce(0) { $0 + 10 + $1.utf8.count })
        writer.varint(UInt64(strings.count))
        for string in strings.sorted() { writer.string(string) }
        return writer.bytes
    }

    package static func decodeStrings(_ bytes: [UInt8]) throws -> Set<String> {
        var isCanonical = true
        return try decodeStrings(bytes, isCanonical: &isCanonical)
    }

    /// ``decodeStrings(_:)``; `isCanonical` is set false unless encoding the set gives `bytes` again (strictly
    /// ascending strings, as ``encode(strings:)`` sorts them, in their shortest form).
    static func decodeStrings(_ bytes: [UInt8], isCanonical: inout Bool) throws -> Set<String> {
        var reader = try BlobReader(bytes)
        let count = try reader.count()
        var strings = Set<String>(minimumCapacity: count)
        var previous: String?
        for _ in 0..<count {
            let string = try reader.string()
            if let previous, !(previous < string) { isCanonical = false }
            strings.insert(string)
            previous = string
        }
        isCanonical = isCanonical && reader.isCanonicalAtEnd
        return strings
    }

    /// Whether `bytes`, which decoded to `sketch`, are what serializing `sketch` gives: a sketch is read back in the
    /// representation its registers call for, so the bytes are that unless they were in the other one.
    static func isCanonical(sketch bytes: [UInt8], of sketch: HyperLogLog) -> Bool {
        bytes.count > 1 && bytes[1] == (sketch.isDense ? 1 : 0)
    }
}

private struct BlobWriter {
    var bytes: [UInt8]

    /// A writer whose bytes reserve `capacity` (enough for what it will write: one allocation, no growth).
    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(RollupBlobCodec.version)
    }

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
    /// False once anything read was in a form the writer does not write (a varint longer than it needs, a presence
    /// byte other than 0 or 1, bytes that are not UTF-8).
    private var isCanonical = true

    /// Whether everything read was in the writer's form and nothing follows it: writing what was read gives the
    /// same bytes.
    var isCanonicalAtEnd: Bool { isCanonical && offset == bytes.count }

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
            if byte < 0x80 {
                // A last byte of 0 after others, or bits past the 64th, are not what the writer writes.
                if shift > 0 && (byte == 0 || (shift == 63 && byte > 1)) { isCanonical = false }
                return value
            }
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
        let slice = bytes[offset..<(offset + length)]
        // ASCII (nearly every stored string) is UTF-8; anything else is checked, which costs several times more.
        if isASCII(offset..<(offset + length)) { return String(decoding: slice, as: UTF8.self) }
        if let string = String(validating: slice, as: UTF8.self) { return string }
        // Not UTF-8: read with replacement characters, which writing would not give back.
        isCanonical = false
        return String(decoding: slice, as: UTF8.self)
    }

    mutating func optionalString() throws -> String? {
        guard offset < bytes.count else { throw truncated() }
        offset += 1
        let flag = bytes[offset - 1]
        if flag > 1 { isCanonical = false }
        return flag == 0 ? nil : try string()
    }

    /// Whether `bytes[range]` are all below 0x80, read a word at a time.
    private func isASCII(_ range: Range<Int>) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, !range.isEmpty else { return true }
            var index = range.lowerBound
            while index + 8 <= range.upperBound {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 { return false }
                index += 8
            }
            while index < range.upperBound {
                if buffer[index] >= 0x80 { return false }
                index += 1
            }
            return true
        }
    }

    private func truncated() -> RollupStoreError {
        RollupStoreError(.invalidData, "Stored rollup detail is truncated or corrupt")
    }
}
