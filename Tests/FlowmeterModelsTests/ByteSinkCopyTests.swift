import Testing

@testable import FlowmeterModels
@testable import FlowmeterWire

/// `ByteSink.copy`, which copies short runs inline as overlapping words: every length, at every alignment, writes
/// exactly the bytes `memmove` would and nothing on either side, also when the two ranges overlap.
@Suite struct ByteSinkCopyTests {
    @Test func copiesExactlyTheBytesAtEveryLengthAndAlignment() {
        let source = (0..<96).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for count in 0...70 {
            for sourceOffset in 0..<8 {
                for targetOffset in 0..<8 {
                    var target = [UInt8](repeating: 0xEE, count: 96)
                    source.withUnsafeBytes { from in
                        target.withUnsafeMutableBytes { to in
                            ByteSink.copy(
                                from.baseAddress! + sourceOffset, to: to.baseAddress! + targetOffset, count: count)
                        }
                    }
                    var expected = [UInt8](repeating: 0xEE, count: 96)
                    expected.replaceSubrange(
                        targetOffset..<targetOffset + count, with: source[sourceOffset..<sourceOffset + count])
                    #expect(target == expected, "count \(count), source +\(sourceOffset), target +\(targetOffset)")
                }
            }
        }
    }

    @Test func overlappingRangesMoveAsMemmoveDoes() {
        let original = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
        for count in 0...40 {
            for shift in -9...9 {
                let from = 20
                let to = from + shift
                var moved = original
                moved.withUnsafeMutableBytes { bytes in
                    ByteSink.copy(
                        UnsafeRawPointer(bytes.baseAddress! + from), to: bytes.baseAddress! + to, count: count)
                }
                var expected = original
                expected.replaceSubrange(to..<to + count, with: original[from..<from + count])
                #expect(moved == expected, "count \(count), shift \(shift)")
            }
        }
    }

    @Test func aSinkAppendsRunsBackToBack() {
        var memory = [UInt8](repeating: 0, count: 128)
        let parts = [
            "", "a", "bc", "def", "ghij", "klmnopq", "rstuvwxy", "0123456789abcdef", "0123456789abcdefg",
            String(repeating: "z", count: 32), String(repeating: "y", count: 33),
        ]
        let written = memory.withUnsafeMutableBufferPointer { buffer -> Int in
            var sink = ByteSink(buffer.baseAddress!)
            for part in parts {
                var utf8 = Array(part.utf8)
                utf8.withUnsafeMutableBytes { sink.bytes(UnsafeRawBufferPointer($0)) }
            }
            return sink.position
        }
        let joined = Array(parts.joined().utf8)
        #expect(written == joined.count)
        #expect(Array(memory[..<written]) == joined)
    }
}
