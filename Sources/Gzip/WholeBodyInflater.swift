import CDeflate
import Synchronization

/// Inflates a whole body in one call with libdeflate, under the same cap, formats and policies as ``Inflater``
/// (zlib's streaming inflate), which stays the reference it is tested and fuzzed against.
///
/// An HTTP body is in memory whole, so nothing needs zlib's streaming: libdeflate decodes the same DEFLATE data
/// several times faster and checks the gzip CRC-32 with the CPU's carry-less multiply, where zlib's inflate and
/// checksum were a fifth of the collector's own instructions for a gzip batch (`make bench-instructions --encoding
/// gzip`). The output goes into one array: first a guess (the gzip trailer's size, or 8× the input, at least
/// 64 KiB, below the cap), and only when that is too small into one of the cap plus the byte that detects
/// exceeding it, inflated again from the start. So a bomb costs the cap in memory and at most twice the cap's
/// inflating, as zlib's path costs the cap once.
///
/// Bodies it does not take (a gzip member whose header carries its own CRC-16, `FHCRC`, which libdeflate skips and
/// zlib checks) return nil, for ``Inflater`` to inflate.
enum WholeBodyInflater {
    /// Decompressors kept between calls (each about 11 KiB of tables: 11,560 bytes from malloc in libdeflate
    /// 1.14), as addresses: at most ``maxKept``.
    private static let kept = Mutex<[UInt]>([])
    static let maxKept = 8

    static func inflate(
        _ input: UnsafeRawBufferPointer, format: Gzip.Format, maxOutputBytes: Int
    ) throws(GzipError) -> [UInt8]? {
        guard !input.isEmpty else { throw GzipError(.corrupt, "empty body is not a compressed stream") }
        if format == .gzip && hasHeaderCRC(input, at: 0) { return nil }
        let limit = maxOutputBytes == Int.max ? Int.max : maxOutputBytes + 1
        var guess = max(Inflater.windowBytes, input.count.multipliedReportingOverflow(by: 8).partialValue)
        if format == .gzip, input.count >= 18 {
            // ISIZE, the last member's length mod 2^32: the whole output for the usual single member.
            let size = Int(input.loadUnaligned(fromByteOffset: input.count - 4, as: UInt32.self).littleEndian)
            guess = max(guess, size)
        }
        guess = min(limit, guess)
        let decompressor = try takeDecompressor()
        defer { give(decompressor) }
        var outcome = try inflate(input, format: format, capacity: guess, decompressor: decompressor)
        if case .full = outcome, guess < limit {
            outcome = try inflate(input, format: format, capacity: limit, decompressor: decompressor)
        }
        switch outcome {
        case .inflated(let bytes) where bytes.count <= maxOutputBytes: return bytes
        case .inflated, .full: throw GzipError(.tooLarge, "inflated body exceeds \(maxOutputBytes) bytes")
        case .notTaken: return nil
        }
    }

    private enum Outcome {
        case inflated([UInt8])
        /// The output did not fit `capacity`.
        case full
        /// A later gzip member has a header CRC: ``Inflater``'s to do.
        case notTaken
    }

    private static func inflate(
        _ input: UnsafeRawBufferPointer, format: Gzip.Format, capacity: Int, decompressor: OpaquePointer
    ) throws(GzipError) -> Outcome {
        var result: Result<Step, GzipError> = .success(.full)
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { allocated, initializedCount in
            // The allocation may be larger than asked for; the cap is in `capacity`, not in what malloc rounded to.
            let output = UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: allocated[..<capacity]))
            result = Result { () throws(GzipError) -> Step in
                try inflate(input, format: format, into: output, count: &initializedCount, decompressor: decompressor)
            }
        }
        switch try result.get() {
        case .done: return .inflated(bytes)
        case .full: return .full
        case .notTaken: return .notTaken
        }
    }

    private enum Step {
        case done, full, notTaken
    }

    /// Inflates every member (gzip) or the one stream into `output`, setting `count` to the bytes written.
    private static func inflate(
        _ input: UnsafeRawBufferPointer, format: Gzip.Format, into output: UnsafeMutableRawBufferPointer,
        count: inout Int, decompressor: OpaquePointer
    ) throws(GzipError) -> Step {
        let inputBase = input.baseAddress!
        var consumed = 0
        while true {
            var read = 0
            var written = 0
            let remainingInput = input.count - consumed
            let room = output.count - count
            let outputAt = output.baseAddress.map { $0 + count }
            let status: libdeflate_result
            switch format {
            case .gzip:
                status = libdeflate_gzip_decompress_ex(
                    decompressor, inputBase + consumed, remainingInput, outputAt, room, &read, &written)
            case .deflate where Inflater.hasZlibHeader(input):
                status = libdeflate_zlib_decompress_ex(
                    decompressor, inputBase, input.count, outputAt, room, &read, &written)
            case .deflate, .rawDeflate:
                status = libdeflate_deflate_decompress_ex(
                    decompressor, inputBase, input.count, outputAt, room, &read, &written)
            }
            switch status {
            case LIBDEFLATE_SUCCESS:
                break
            case LIBDEFLATE_INSUFFICIENT_SPACE:
                return .full
            default:
                throw GzipError(.corrupt, "invalid or truncated compressed data")
            }
            consumed += read
            count += written
            let remaining = input.count - consumed
            if remaining == 0 { return .done }
            guard format == .gzip, input[consumed] == 0x1F, remaining < 2 || input[consumed + 1] == 0x8B else {
                throw GzipError(.corrupt, "\(remaining) unexpected bytes after the end of the compressed stream")
            }
            // Another gzip member follows (RFC 1952 §2.2): inflate it onto the same output.
            if hasHeaderCRC(input, at: consumed) { return .notTaken }
        }
    }

    /// Whether the gzip member header at `offset` sets `FHCRC` (RFC 1952 §2.3.1: bit 1 of the flags at byte 3).
    private static func hasHeaderCRC(_ input: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        offset + 3 < input.count && input[offset + 3] & 0x02 != 0
    }

    private static func takeDecompressor() throws(GzipError) -> OpaquePointer {
        if let address = kept.withLock({ $0.popLast() }), let decompressor = OpaquePointer(bitPattern: address) {
            return decompressor
        }
        // libdeflate's only failure here is malloc's.
        guard let decompressor = libdeflate_alloc_decompressor() else {
            throw GzipError(.outOfMemory, "libdeflate could not allocate a decompressor")
        }
        return decompressor
    }

    private static func give(_ decompressor: OpaquePointer) {
        let address = UInt(bitPattern: decompressor)
        let isKept = kept.withLock { kept in
            guard kept.count < maxKept else { return false }
            kept.append(address)
            return true
        }
        if !isKept { libdeflate_free_decompressor(decompressor) }
    }
}
