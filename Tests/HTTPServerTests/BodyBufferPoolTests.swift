import Testing

@testable import HTTPServer

/// Request-body buffers handed back for the next request.
@Suite struct BodyBufferPoolTests {
    @Test func aReturnedBufferIsReusedEmptyWithItsCapacity() {
        let pool = BodyBufferPool()
        var body = pool.take(capacity: 13_000)
        #expect(body.isEmpty && body.capacity >= 13_000)
        body.append(contentsOf: repeatElement(7, count: 13_000))
        pool.give(&body)
        #expect(body.isEmpty)
        #expect(pool.count == 1)
        let next = pool.take(capacity: 100)
        #expect(next.isEmpty && next.capacity >= 13_000, "the pooled buffer, emptied")
        #expect(pool.count == 0)
    }

    @Test func aCopyTheHandlerKeptIsNeverTouched() {
        let pool = BodyBufferPool()
        var body = pool.take(capacity: 64)
        body.append(contentsOf: [1, 2, 3])
        let kept = body
        pool.give(&body)
        #expect(kept == [1, 2, 3])
        var next = pool.take(capacity: 3)
        next.append(contentsOf: [9, 9, 9])
        #expect(kept == [1, 2, 3])
    }

    @Test func largeBuffersAndBuffersPastTheBoundAreNotKept() {
        let pool = BodyBufferPool()
        var large = pool.take(capacity: BodyBufferPool.maxCapacity + 1)
        pool.give(&large)
        #expect(pool.count == 0)
        var buffers = (0..<(BodyBufferPool.maxBuffers + 3)).map { _ in pool.take(capacity: 1_024) }
        for index in buffers.indices { pool.give(&buffers[index]) }
        #expect(pool.count == BodyBufferPool.maxBuffers)
    }
}
