/// Gzip (RFC 1952) with the SDK's own deflate: the reporter needs no zlib, so it builds from Foundation alone.
enum GzipWriter {
    /// `bytes` as one gzip member: fixed header (no name, no time), raw deflate, CRC-32 and length.
    static func compress(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        output += Deflate.compress(bytes)
        let crc = CRC32.checksum(bytes)
        let size = UInt32(truncatingIfNeeded: bytes.count)
        for shift in stride(from: 0, to: 32, by: 8) { output.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { output.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
        return output
    }
}
