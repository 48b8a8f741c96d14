import CZlib

extension Gzip {
    /// The CRC-32 (IEEE 802.3, zlib's `crc32`) of `bytes`, continuing from `initial` (0 to start).
    ///
    /// The checksum gzip members carry; the collector's disk spool keeps one per record to find torn and corrupt
    /// writes. zlib processes several bytes per step, so this is cheap enough to run over every spooled byte.
    public static func crc32(_ bytes: UnsafeRawBufferPointer, continuing initial: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return initial }
        var checksum = UInt(initial)
        var start = base.assumingMemoryBound(to: UInt8.self)
        var remaining = bytes.count
        // zlib takes a 32-bit length; larger buffers go in pieces.
        while remaining > 0 {
            let piece = min(remaining, 1 << 30)
            checksum = CZlib.crc32(checksum, start, UInt32(piece))
            start += piece
            remaining -= piece
        }
        return UInt32(truncatingIfNeeded: checksum)
    }

    /// The CRC-32 of `bytes`, continuing from `initial`.
    public static func crc32(_ bytes: [UInt8], continuing initial: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, continuing: initial) }
    }
}
