/// Inflate and compress HTTP bodies, never inflating past a caller's cap: whole bodies inflate with libdeflate
/// (zlib's streaming inflate is the reference it is tested against, and inflates what libdeflate does not take),
/// compression is zlib's.
///
/// Decompression is capped after inflation (the lesson of OpenTelemetry Collector CVE-2024-36129): the inflater
/// writes straight into the result, never given room for more than one byte past `maxOutputBytes`, so a body that
/// inflates to 1 GiB costs at most the cap in memory and the time to inflate the cap (twice, for libdeflate, whose
/// first try goes into a smaller guess).
///
/// Formats and policies, decided once here:
/// - `.gzip` (RFC 1952): concatenated members are legal (`cat a.gz b.gz` is a gzip file) and inflate to the
///   concatenation of their contents. Any other bytes after the last member, including zero padding, are `.corrupt`.
/// - `.deflate` (HTTP's `Content-Encoding: deflate`): RFC 1950 zlib streams; a body without a valid zlib header is
///   inflated as raw RFC 1951 deflate, because some clients send that for `deflate`. Trailing bytes are `.corrupt`.
/// - `.rawDeflate` (RFC 1951): raw deflate only. Trailing bytes are `.corrupt`.
/// - An empty body is `.corrupt` in every format: it is not a compressed stream.
/// - The two inflaters agree on every body and cap (the tests and the `inflate` fuzz target hold them to it) but
///   one: a stream corrupt near the cap may be `.tooLarge` for one and `.corrupt` for the other (libdeflate checks
///   some things ahead of its output, zlib after writing what it can). Either way the body is refused. And libdeflate
///   inflates some malformed streams that zlib refuses (a distance code zlib calls invalid); no compressor writes
///   them, and what they inflate to is still capped and then decoded like any body.
public enum Gzip {
    /// A compressed stream's framing.
    public enum Format: Sendable, Hashable {
        /// RFC 1952 gzip: header, deflate data, CRC-32 and length; concatenated members allowed.
        case gzip
        /// RFC 1950 zlib (HTTP `deflate`); inflating also accepts raw deflate without the zlib header.
        case deflate
        /// RFC 1951 deflate without any header or checksum.
        case rawDeflate

        /// The format for an HTTP `Content-Encoding` value (`gzip`, `x-gzip`, `deflate`), ignoring case and
        /// surrounding spaces; `nil` for anything else, including `identity`, which needs no inflating.
        public init?(contentEncoding: String) {
            switch contentEncoding.trimmingSpaces().lowercased() {
            case "gzip", "x-gzip": self = .gzip
            case "deflate": self = .deflate
            default: return nil
            }
        }
    }

    /// The default cap on inflated bytes: 8 MiB, the collector's decompressed body limit (docs/api.md#ingest).
    public static let defaultMaxOutputBytes = 8 << 20

    /// Inflates `bytes`, throwing `.tooLarge` as soon as the output would exceed `maxOutputBytes`.
    ///
    /// Output goes first into a guess of 8× the input (at least 64 KiB); a body that inflates past the guess moves
    /// into one array of the cap's size, so peak memory is below guess + cap (plus zlib's ~40 KiB of state), and only
    /// the address space of the cap is reserved, not memory. Throws `.corrupt` for a bad header, checksum or length,
    /// a truncated stream, or trailing bytes (see `Gzip`); `.tooLarge` once the output would pass the cap.
    public static func inflate(
        _ bytes: [UInt8],
        format: Format = .gzip,
        maxOutputBytes: Int = defaultMaxOutputBytes
    ) throws(GzipError) -> [UInt8] {
        // withUnsafeBytes only rethrows untyped errors, so carry the typed one out in a Result.
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(GzipError) -> [UInt8] in
                try inflate(buffer, format: format, maxOutputBytes: maxOutputBytes)
            }
        }
        return try result.get()
    }

    /// Inflates the bytes in `buffer`, which need only stay valid for the duration of the call.
    ///
    /// Same caps and errors as the `[UInt8]` overload; the buffer is never written to.
    public static func inflate(
        _ buffer: UnsafeRawBufferPointer,
        format: Format = .gzip,
        maxOutputBytes: Int = defaultMaxOutputBytes
    ) throws(GzipError) -> [UInt8] {
        precondition(maxOutputBytes >= 0, "maxOutputBytes must not be negative")
        if let bytes = try WholeBodyInflater.inflate(buffer, format: format, maxOutputBytes: maxOutputBytes) {
            return bytes
        }
        return try referenceInflate(buffer, format: format, maxOutputBytes: maxOutputBytes)
    }

    /// Inflates with zlib's streaming inflate alone: the reference that `inflate` (libdeflate, whole bodies at once)
    /// is held to by the tests and the `inflate` fuzz target. Same caps and errors.
    public static func referenceInflate(
        _ buffer: UnsafeRawBufferPointer,
        format: Format = .gzip,
        maxOutputBytes: Int = defaultMaxOutputBytes
    ) throws(GzipError) -> [UInt8] {
        precondition(maxOutputBytes >= 0, "maxOutputBytes must not be negative")
        return try Inflater.inflate(buffer, format: format, maxOutputBytes: maxOutputBytes)
    }

    /// Compresses `bytes` in one call; `level` runs from 0 (store) to 9 (smallest), 6 is zlib's default.
    ///
    /// For input that arrives in pieces, or is too large to hold, use `GzipCompressor`.
    public static func compress(_ bytes: [UInt8], level: Int = 6, format: Format = .gzip) -> [UInt8] {
        let compressor = GzipCompressor(format: format, level: level)
        var output: [UInt8] = []
        output.reserveCapacity(compressor.bound(forInputCount: bytes.count))
        compressor.write(bytes, into: &output)
        compressor.finish(into: &output)
        return output
    }
}

extension String {
    fileprivate func trimmingSpaces() -> Substring {
        var slice = self[...]
        while slice.first == " " || slice.first == "\t" { slice.removeFirst() }
        while slice.last == " " || slice.last == "\t" { slice.removeLast() }
        return slice
    }
}
