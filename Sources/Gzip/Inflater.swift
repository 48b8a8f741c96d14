import CZlib

/// The internal layer over zlib's inflate: owns the `z_stream`, every pointer, and the mapping of zlib's codes
/// to `GzipError`.
///
/// The `z_stream` lives on the heap because zlib keeps a pointer back to it in its state and refuses a moved stream.
final class Inflater {
    /// The smallest first guess at the inflated size.
    static let windowBytes = 64 << 10

    private let stream: UnsafeMutablePointer<z_stream>

    private init(windowBits: Int32) throws(GzipError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let rc = inflateInit2_(stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw rc == Z_MEM_ERROR
                ? GzipError(.outOfMemory, "zlib could not allocate its inflate state")
                : GzipError(.corrupt, "zlib refused to start inflating (code \(rc))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    static func inflate(
        _ input: UnsafeRawBufferPointer,
        format: Gzip.Format,
        maxOutputBytes: Int
    ) throws(GzipError) -> [UInt8] {
        guard let base = input.baseAddress, !input.isEmpty else {
            throw GzipError(.corrupt, "empty body is not a compressed stream")
        }
        let windowBits: Int32
        switch format {
        case .gzip: windowBits = 16 + MAX_WBITS
        case .deflate: windowBits = hasZlibHeader(input) ? MAX_WBITS : -MAX_WBITS
        case .rawDeflate: windowBits = -MAX_WBITS
        }
        let inflater = try Inflater(windowBits: windowBits)
        inflater.stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        inflater.stream.pointee.avail_in = 0

        // Inflate straight into the result: first into a guess sized from the input, and only if that fills,
        // into one array of the full cap (plus the byte that detects exceeding it). Untouched capacity is address
        // space, not memory, so a bomb costs the cap at most, and a typical body one small allocation.
        let limit = maxOutputBytes == Int.max ? Int.max : maxOutputBytes + 1
        let guess = min(limit, max(windowBytes, input.count.multipliedReportingOverflow(by: 8).partialValue))
        var output = try inflater.fill(capacity: guess, carrying: [], input: input, format: format)
        if !output.isFinished && guess < limit {
            output = try inflater.fill(capacity: limit, carrying: output.bytes, input: input, format: format)
        }
        if output.isFinished && output.bytes.count <= maxOutputBytes {
            return output.bytes
        }
        throw GzipError(.tooLarge, "inflated body exceeds \(maxOutputBytes) bytes")
    }

    /// RFC 1950 §2.2: method 8 (deflate), window ≤ 32 KiB, and the header's check bits.
    static func hasZlibHeader(_ input: UnsafeRawBufferPointer) -> Bool {
        guard input.count >= 2 else { return false }
        let cmf = Int(input[0])
        let flg = Int(input[1])
        return cmf & 0x0F == 8 && cmf >> 4 <= 7 && (cmf << 8 | flg) % 31 == 0
    }

    /// Makes an array of `capacity`, starting with `carried` (which is released once copied), and inflates into
    /// it until the stream ends or the array is full.
    private func fill(
        capacity: Int,
        carrying carried: consuming [UInt8],
        input: UnsafeRawBufferPointer,
        format: Gzip.Format
    ) throws(GzipError) -> (bytes: [UInt8], isFinished: Bool) {
        var result: Result<Bool, GzipError> = .success(false)
        var carried = carried
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { allocated, initializedCount in
            // The allocation may be larger than asked for; the cap is in `capacity`, not in what malloc rounded to.
            let buffer = UnsafeMutableBufferPointer(rebasing: allocated[..<capacity])
            initializedCount = carried.count
            _ = buffer.initialize(fromContentsOf: carried)
            carried = []
            result = Result { () throws(GzipError) -> Bool in
                try inflate(into: buffer, count: &initializedCount, input: input, format: format)
            }
        }
        return (bytes, try result.get())
    }

    /// Inflates into `buffer[count...]`, advancing `count`; returns true when the stream ended, false when full.
    private func inflate(
        into buffer: UnsafeMutableBufferPointer<UInt8>,
        count: inout Int,
        input: UnsafeRawBufferPointer,
        format: Gzip.Format
    ) throws(GzipError) -> Bool {
        let inputBase = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
        while true {
            let consumed = UnsafePointer(stream.pointee.next_in!) - inputBase
            if stream.pointee.avail_in == 0 {
                // avail_in and avail_out are 32 bits wide; feed and fill larger buffers in slices.
                stream.pointee.avail_in = UInt32(min(input.count - consumed, Int(UInt32.max)))
            }
            if count == buffer.count {
                return false
            }
            stream.pointee.next_out = buffer.baseAddress! + count
            stream.pointee.avail_out = UInt32(min(buffer.count - count, Int(UInt32.max)))

            let rc = CZlib.inflate(stream, Z_NO_FLUSH)

            count = stream.pointee.next_out - buffer.baseAddress!
            let remaining = input.count - (UnsafePointer(stream.pointee.next_in!) - inputBase)
            switch rc {
            case Z_OK:
                continue
            case Z_STREAM_END:
                if remaining == 0 { return true }
                let next = input.count - remaining
                guard format == .gzip, input[next] == 0x1F, remaining < 2 || input[next + 1] == 0x8B else {
                    throw GzipError(.corrupt, "\(remaining) unexpected bytes after the end of the compressed stream")
                }
                // Another gzip member follows (RFC 1952 §2.2): inflate it onto the same output.
                guard inflateReset(stream) == Z_OK else {
                    throw GzipError(.corrupt, "zlib could not start the next gzip member")
                }
            case Z_BUF_ERROR where remaining == 0:
                throw GzipError(.corrupt, "compressed stream is truncated")
            case Z_MEM_ERROR:
                throw GzipError(.outOfMemory, "zlib ran out of memory while inflating")
            case Z_NEED_DICT:
                throw GzipError(.corrupt, "stream needs a preset dictionary, which is not supported")
            default:
                throw GzipError(.corrupt, zlibMessage(default: "invalid compressed data (code \(rc))"))
            }
        }
    }

    private func zlibMessage(default fallback: String) -> String {
        guard let message = stream.pointee.msg else { return fallback }
        return "invalid compressed data: " + String(cString: message)
    }
}
