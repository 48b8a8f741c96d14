import Foundation
import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `ByteReader.scanString` looks at strings sixteen bytes at a time, then eight, then one: a quote, backslash, control,
/// non-ASCII or invalid byte is found at every offset within and across those blocks, wherever the string starts
/// and however near the end of the buffer it ends, and nothing past the buffer's end is ever read (each buffer ends
/// at an unreadable page, so a read past it crashes the test).
@Suite struct StringScanTests {
    /// What a scan of one string body should find.
    enum Outcome: Equatable {
        /// The closing quote is the byte before `end`; `escaped` says whether the body held an escape.
        case closed(end: Int, escaped: Bool)
        case failed(offset: Int, reason: String)
    }

    /// A string body of `length` filler bytes with `special` spliced in at `offset` (replacing filler), after `lead`
    /// bytes of filler before the opening position; the buffer ends right after the body's closing quote (or the
    /// body, for `terminated: false`).
    struct Case: CustomStringConvertible {
        var lead: Int
        var body: [UInt8]
        var terminated: Bool
        var expected: Outcome

        var description: String { "lead \(lead), body \(body), terminated \(terminated)" }
    }

    /// The bytes spliced in, what each makes of a string, and how many bytes it takes.
    static let specials: [(bytes: [UInt8], outcome: @Sendable (_ start: Int, _ at: Int, _ bodyEnd: Int) -> Outcome)] = [
        // A quote ends the string where it sits.
        ([0x22], { start, at, _ in .closed(end: start + at + 1, escaped: false) }),
        // An escape is stepped over; the string ends at its real quote.
        ([0x5C, 0x6E], { _, _, bodyEnd in .closed(end: bodyEnd + 1, escaped: true) }),
        ([0x5C, 0x75, 0x30, 0x30, 0x65, 0x39], { _, _, bodyEnd in .closed(end: bodyEnd + 1, escaped: true) }),
        ([0x5C, 0x78], { start, at, _ in .failed(offset: start + at, reason: "Invalid escape") }),
        // Control characters fail at their offset; DEL and space are plain bytes.
        ([0x00], { start, at, _ in .failed(offset: start + at, reason: "Unescaped control character") }),
        ([0x1F], { start, at, _ in .failed(offset: start + at, reason: "Unescaped control character") }),
        ([0x0A], { start, at, _ in .failed(offset: start + at, reason: "Unescaped control character") }),
        ([0x7F], { _, _, bodyEnd in .closed(end: bodyEnd + 1, escaped: false) }),
        ([0x20], { _, _, bodyEnd in .closed(end: bodyEnd + 1, escaped: false) }),
        // Valid UTF-8 of two, three and four bytes passes; a stray or truncated sequence fails at its lead byte.
        ([0xC3, 0xA9], { _, _, bodyEnd in .closed(end: bodyEnd + 1, escaped: false) }),
        ([0xE2, 0x82, 0xAC], { _, _, bodyEnd in .closed(end: bodyEnd + 1, escaped: false) }),
        ([0xF0, 0x9F, 0x98, 0x80], { _, _, bodyEnd in .closed(end: bodyEnd + 1, escaped: false) }),
        ([0xFF], { start, at, _ in .failed(offset: start + at, reason: "Invalid UTF-8") }),
        ([0x80], { start, at, _ in .failed(offset: start + at, reason: "Invalid UTF-8") }),
        ([0xC3, 0x41], { start, at, _ in .failed(offset: start + at, reason: "Invalid UTF-8") }),
    ]

    /// Every special at every offset of bodies up to 70 bytes, after leads of 0 to 17 bytes.
    static func cases() -> [Case] {
        var cases: [Case] = []
        for lead in 0..<18 {
            for length in 0...70 {
                let filler = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                let start = lead + 1
                cases.append(
                    Case(
                        lead: lead, body: filler, terminated: true,
                        expected: .closed(end: start + length + 1, escaped: false)))
                cases.append(
                    Case(
                        lead: lead, body: filler, terminated: false,
                        expected: .failed(offset: start + length, reason: "Unterminated string")))
                for (bytes, outcome) in specials where bytes.count <= length {
                    for at in 0...(length - bytes.count) {
                        var body = filler
                        body.replaceSubrange(at..<(at + bytes.count), with: bytes)
                        cases.append(
                            Case(lead: lead, body: body, terminated: true, expected: outcome(start, at, start + length))
                        )
                    }
                }
            }
        }
        return cases
    }

    @Test func everySpecialByteAtEveryOffsetIsFoundWithoutReadingPastTheEnd() throws {
        let cases = Self.cases()
        #expect(cases.count > 100_000)
        try GuardedBuffer.withPages(bytes: 256) { buffer in
            for test in cases {
                var document = [UInt8](repeating: UInt8(ascii: " "), count: test.lead)
                document.append(UInt8(ascii: "\""))
                document += test.body
                if test.terminated { document.append(UInt8(ascii: "\"")) }
                let got = buffer.withBytesEndingAtGuard(document) { base, count in
                    var reader = ByteReader(base: base, count: count)
                    reader.index = test.lead + 1
                    do throws(JSONSyntaxError) {
                        let escaped = try reader.scanString()
                        return Outcome.closed(end: reader.index, escaped: escaped)
                    } catch {
                        return Outcome.failed(offset: error.offset, reason: error.reason)
                    }
                }
                #expect(got == test.expected, "\(test)")
                if got != test.expected { return }
            }
        }
    }

    /// The candidate search alone: it returns the first byte that is not printable ASCII other than a quote or
    /// backslash, or the start of the last bytes too few for a word (the end, when there are none).
    @Test func theCandidateSearchStopsAtTheFirstSpecialByte() throws {
        let plain = (0..<64).map { UInt8(ascii: "A") + UInt8($0 % 26) }
        try GuardedBuffer.withPages(bytes: 256) { buffer in
            for special: UInt8 in [0x22, 0x5C, 0x00, 0x1F, 0x80, 0xC3, 0xFF] {
                for length in 0...plain.count {
                    for at in 0...length {
                        var bytes = Array(plain[0..<length])
                        if at < length { bytes[at] = special }
                        let found = buffer.withBytesEndingAtGuard(bytes) { base, count in
                            ByteReader(base: base, count: count).nextStringCandidate(from: 0)
                        }
                        // Blocks of sixteen, then of eight, are searched; the last seven bytes are left to the
                        // exact path, so the search returns the special's offset or the start of those bytes.
                        let tail = length - length % 8
                        #expect(found == min(at, tail), "special \(special) at \(at) of \(length)")
                    }
                }
            }
        }
    }
}

/// Memory whose end is followed by an unreadable page: bytes copied to end at that boundary cannot be read past
/// without a crash.
struct GuardedBuffer {
    let start: UnsafeMutableRawPointer
    let usable: Int

    static func withPages<R>(bytes: Int, _ body: (GuardedBuffer) throws -> R) throws -> R {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let usable = (bytes + page - 1) / page * page
        let mapped = mmap(nil, usable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { throw POSIXError(.ENOMEM) }
        defer { munmap(mapped, usable + page) }
        guard mprotect(mapped + usable, page, PROT_NONE) == 0 else { throw POSIXError(.EACCES) }
        return try body(GuardedBuffer(start: mapped, usable: usable))
    }

    /// Runs `body` over a copy of `bytes` whose last byte is the last readable one.
    func withBytesEndingAtGuard<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
        precondition(bytes.count <= usable)
        let base = (start + usable - bytes.count).assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBufferPointer { source in
            if let source = source.baseAddress { base.update(from: source, count: bytes.count) }
        }
        // An empty document still needs a base address: the guard page's, never read.
        return body(UnsafePointer(base), bytes.count)
    }
}
