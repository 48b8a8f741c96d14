import Gzip

/// The collector's gzip and deflate inflater (``Gzip``), on hostile compressed bodies and on its own output.
///
/// Invariants, for each of the three formats:
/// - The input as a compressed body: inflating never crashes, never returns more than the cap, and fails only with
///   `corrupt` or `tooLarge`. A success is exact at its size: the same input under a cap one byte smaller is
///   `tooLarge`, and under a larger cap gives the same bytes.
/// - The input as content: `compress` then `inflate` gives the input back, under a cap of exactly its size; one byte
///   less is `tooLarge`; one byte of anything appended to the stream is `corrupt` (trailing data is refused).
/// - Two gzip members back to back inflate to the concatenation of their contents (RFC 1952 §2.2).
/// - libdeflate's whole-body inflate (``Gzip/inflate(_:format:maxOutputBytes:)``) and zlib's streaming one
///   (``Gzip/referenceInflate(_:format:maxOutputBytes:)``) agree on every input and cap: the same bytes, or the
///   same error code; but for a stream corrupt near the cap, which one may call `tooLarge` and the other
///   `corrupt` (both refuse it, and both call it `corrupt` under a cap no stream can pass), and a malformed stream
///   libdeflate inflates and zlib refuses (its bytes must still keep the cap's invariants).
///
/// The first input byte picks the cap for the hostile direction (0–25,500 bytes), so small caps are exercised and
/// a bomb costs little time.
package enum InflateFuzzTarget: FuzzTarget {
    package static let name = "inflate"

    private static let formats: [Gzip.Format] = [.gzip, .deflate, .rawDeflate]

    package static func check(_ input: [UInt8]) throws(FuzzFailure) {
        let cap = Int(input.first ?? 0) * 100
        for format in formats {
            try checkHostile(input, format: format, cap: cap)
            try checkRoundTrip(input, format: format, level: Int(input.last ?? 6) % 10)
        }
        let half = input.count / 2
        let first = Gzip.compress(Array(input[..<half]))
        let second = Gzip.compress(Array(input[half...]), level: 1)
        try require(
            inflated(first + second, format: .gzip, cap: input.count) == .inflated(input),
            "two gzip members do not inflate to their concatenation")
    }

    private static func checkHostile(_ input: [UInt8], format: Gzip.Format, cap: Int) throws(FuzzFailure) {
        let outcome = inflated(input, format: format, cap: cap)
        let reference = inflated(input, format: format, cap: cap, reference: true)
        if outcome != reference {
            // One difference is allowed: a stream corrupt near the cap. libdeflate checks some things ahead of its
            // output (a match's room before its distance, a stored block's length before copying it) and zlib
            // after writing what it can, so one may say tooLarge where the other says corrupt. Both refuse the
            // body; under a cap no stream can pass both must call it corrupt: deflate expands at most 1,032:1,
            // plus the 65,535 bytes a truncated stored block may claim, whose room libdeflate wants first.
            let roomy = cap + input.count * 1_100 + 65_536
            let refusals: Set<Outcome> = [.failed(.tooLarge), .failed(.corrupt)]
            let isCorruptNearTheCap =
                refusals.contains(outcome) && refusals.contains(reference)
                && inflated(input, format: format, cap: roomy) == .failed(.corrupt)
                && inflated(input, format: format, cap: roomy, reference: true) == .failed(.corrupt)
            // And libdeflate inflates some malformed streams zlib refuses (a distance code zlib calls invalid):
            // no compressor writes them; the bytes still pass the cap's checks below and then face the decoder.
            let isLenient: Bool
            if case .inflated = outcome, reference == .failed(.corrupt) { isLenient = true } else { isLenient = false }
            try require(
                isCorruptNearTheCap || isLenient,
                "\(format), cap \(cap): libdeflate gave \(outcome), zlib \(reference)")
        }
        switch outcome {
        case .inflated(let output):
            try require(output.count <= cap, "\(format): \(output.count) bytes inflated under a cap of \(cap)")
            if !output.isEmpty {
                try require(
                    inflated(input, format: format, cap: output.count - 1) == .failed(.tooLarge),
                    "\(format): \(output.count) bytes inflated, but a cap of one less is not tooLarge")
            }
            try require(
                inflated(input, format: format, cap: cap + 4096) == .inflated(output),
                "\(format): a larger cap inflates to different bytes")
        case .failed(let code):
            try require(code == .corrupt || code == .tooLarge, "\(format): unexpected error \(code)")
        }
    }

    private static func checkRoundTrip(_ content: [UInt8], format: Gzip.Format, level: Int) throws(FuzzFailure) {
        let compressed = Gzip.compress(content, level: level, format: format)
        try require(
            inflated(compressed, format: format, cap: content.count) == .inflated(content),
            "\(format) level \(level): compress then inflate does not give the content back")
        if !content.isEmpty {
            try require(
                inflated(compressed, format: format, cap: content.count - 1) == .failed(.tooLarge),
                "\(format) level \(level): inflating under a cap one byte short is not tooLarge")
        }
        let trailing = compressed + [content.first ?? 0]
        try require(
            inflated(trailing, format: format, cap: content.count + 1) == .failed(.corrupt),
            "\(format) level \(level): a stream with a trailing byte is not corrupt")
    }

    /// What inflating gave.
    private enum Outcome: Hashable {
        case inflated([UInt8])
        case failed(GzipError.Code)
    }

    private static func inflated(
        _ bytes: [UInt8], format: Gzip.Format, cap: Int, reference: Bool = false
    ) -> Outcome {
        do throws(GzipError) {
            if reference {
                // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
                let output = bytes.withUnsafeBytes { buffer in
                    Result { () throws(GzipError) -> [UInt8] in
                        try Gzip.referenceInflate(buffer, format: format, maxOutputBytes: cap)
                    }
                }
                return .inflated(try output.get())
            }
            return .inflated(try Gzip.inflate(bytes, format: format, maxOutputBytes: cap))
        } catch {
            return .failed(error.code)
        }
    }
}
