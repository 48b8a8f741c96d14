import Foundation
import Kafka
import Synchronization
import TestSupport
import Testing

/// `appendBorrowing`: librdkafka reads keys and values in place from memory the batch's owner keeps alive until the
/// completion has run.
@Suite struct BorrowedMessagesTests {
    /// How many blocks were released.
    final class Releases: Sendable {
        let count = Atomic<Int>(0)
    }

    /// One block of bytes, like the collector's record block; counts its own release.
    final class Block: @unchecked Sendable {
        // @unchecked: the bytes are written once in init and only read afterwards.
        let bytes: UnsafeMutableRawBufferPointer
        let released: Releases

        init(_ text: String, released: Releases) {
            let utf8 = Array(text.utf8)
            bytes = .allocate(byteCount: utf8.count, alignment: 8)
            bytes.copyBytes(from: utf8)
            self.released = released
        }

        deinit {
            bytes.deallocate()
            released.count.wrappingAdd(1, ordering: .relaxed)
        }

        func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[range])
        }
    }

    @Test func messagesArriveFromTheBlockAndTheBlockLivesUntilTheCompletion() async throws {
        let fixture = try KafkaFixture()
        let producer = try fixture.makeProducer()
        let log = DeliveryLog()
        let released = Releases()
        let releasedAtCompletion = Atomic<Int>(-1)
        // Keys and values back to back in one block: "k0v0-…k1v1-…".
        var text = ""
        var ranges: [(key: Range<Int>, value: Range<Int>)] = []
        for index in 0..<40 {
            let key = "k\(index % 4)"
            let value = #"{"borrowed":\#(index)}"#
            ranges.append(
                (
                    text.utf8.count..<text.utf8.count + key.utf8.count,
                    text.utf8.count + key.utf8.count..<text.utf8.count + key.utf8.count + value.utf8.count
                ))
            text += key + value
        }
        do {
            let block = Block(text, released: released)
            let logged = log.completion(for: [])
            let completion: @Sendable (KafkaBatchOutcome) -> Void = { outcome in
                // Still alive while librdkafka reported on the messages that point into it.
                releasedAtCompletion.store(released.count.load(ordering: .relaxed), ordering: .relaxed)
                logged(outcome)
            }
            try producer.enqueueBatch(capacity: ranges.count, owner: block, completion: completion) { writer in
                for range in ranges {
                    try writer.appendBorrowing(
                        topic: KafkaFixture.eventsTopic, key: block.slice(range.key), value: block.slice(range.value),
                        headers: TestEvents.headers)
                }
            }
        }
        #expect(try await log.waitFor(batches: 1))
        #expect(log.outcomes.first?.persisted == 40)
        #expect(releasedAtCompletion.load(ordering: .relaxed) == 0, "the block outlived the enqueue's scope")
        // The completion has run: the batch lets go of its block right after it.
        _ = await eventually(every: .milliseconds(10)) { released.count.load(ordering: .relaxed) > 0 }
        #expect(released.count.load(ordering: .relaxed) == 1)
        #expect(await producer.shutdown(timeout: .seconds(5)) == 0)

        let consumed = try await fixture.consumeAll(topic: KafkaFixture.eventsTopic, expecting: 40)
        let values = Set(consumed.map { String(decoding: $0.value, as: UTF8.self) })
        #expect(values == Set((0..<40).map { #"{"borrowed":\#($0)}"# }))
        #expect(consumed.allSatisfy { $0.headers == TestEvents.headers })
    }
}
