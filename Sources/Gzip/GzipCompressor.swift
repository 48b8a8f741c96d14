/// A streaming compressor for input that arrives in pieces or is too large to hold at once.
///
/// Use one instance from one thread at a time; call `write(_:into:)` any number of times, then `finish(into:)`
/// exactly once. Output is appended to the caller's array, so a caller can send and clear it between writes.
public final class GzipCompressor {
    private let deflater: Deflater
    private var isFinished = false

    /// Starts a stream in `format` at `level` (0 store … 9 smallest; 6 is zlib's default).
    ///
    /// Traps on a level outside 0...9, a programming error.
    public init(format: Gzip.Format = .gzip, level: Int = 6) {
        deflater = Deflater(format: format, level: level)
    }

    /// Compresses `bytes`, appending whatever compressed output is ready to `output`.
    public func write(_ bytes: [UInt8], into output: inout [UInt8]) {
        bytes.withUnsafeBytes { write($0, into: &output) }
    }

    /// Compresses the bytes in `buffer`, which need only stay valid for the duration of the call.
    public func write(_ buffer: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        precondition(!isFinished, "write after finish")
        deflater.deflate(buffer, finishing: false, into: &output)
    }

    /// Ends the stream, appending the remaining output and the trailer; call it once.
    public func finish(into output: inout [UInt8]) {
        precondition(!isFinished, "finish called twice")
        isFinished = true
        deflater.deflate(UnsafeRawBufferPointer(start: nil, count: 0), finishing: true, into: &output)
    }

    /// An upper bound on the compressed size of `count` input bytes written as one stream.
    public func bound(forInputCount count: Int) -> Int {
        deflater.bound(forInputCount: count)
    }
}
