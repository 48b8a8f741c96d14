import CZlib

/// The internal layer over zlib's deflate: owns the heap `z_stream` and every pointer `GzipCompressor` needs.
final class Deflater {
    private static let windowBytes = 64 << 10
    private let stream: UnsafeMutablePointer<z_stream>

    init(format: Gzip.Format, level: Int) {
        precondition((0...9).contains(level), "compression level must be in 0...9")
        let windowBits: Int32
        switch format {
        case .gzip: windowBits = 16 + MAX_WBITS
        case .deflate: windowBits = MAX_WBITS
        case .rawDeflate: windowBits = -MAX_WBITS
        }
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let rc = deflateInit2_(
            stream, Int32(level), Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY,
            zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        // Only a failed allocation of ~256 KiB gets here; like any other allocation failure, that is fatal.
        precondition(rc == Z_OK, "deflateInit2 failed with code \(rc)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// An upper bound on the compressed size of `count` input bytes in one stream.
    func bound(forInputCount count: Int) -> Int {
        Int(deflateBound(stream, UInt(count)))
    }

    /// Compresses `input`, appending whatever zlib emits; with `finishing`, ends the stream.
    func deflate(_ input: UnsafeRawBufferPointer, finishing: Bool, into output: inout [UInt8]) {
        let base = input.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self)) }
        var offset = 0
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.windowBytes) { window in
            while true {
                if stream.pointee.avail_in == 0, let base, offset < input.count {
                    let slice = min(input.count - offset, Int(UInt32.max))
                    stream.pointee.next_in = base + offset
                    stream.pointee.avail_in = UInt32(slice)
                    offset += slice
                }
                let moreInput = offset < input.count
                stream.pointee.next_out = window.baseAddress
                stream.pointee.avail_out = UInt32(window.count)
                let flush = finishing && !moreInput ? Z_FINISH : Z_NO_FLUSH
                let rc = CZlib.deflate(stream, flush)
                precondition(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR, "deflate failed with code \(rc)")
                let produced = window.count - Int(stream.pointee.avail_out)
                output.append(contentsOf: UnsafeBufferPointer(rebasing: window[..<produced]))
                if flush == Z_FINISH {
                    if rc == Z_STREAM_END { return }
                } else if stream.pointee.avail_in == 0 && !moreInput && stream.pointee.avail_out != 0 {
                    return
                }
            }
        }
        stream.pointee.next_in = nil
    }
}
