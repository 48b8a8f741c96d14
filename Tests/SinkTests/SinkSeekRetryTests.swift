import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Sink

@Suite struct SinkSeekRetryTests {
    /// A seek that fails (librdkafka timed out on a loaded machine) is tried again before the next poll, not only
    /// when the partition's next record arrives: after its last record was read, none will.
    @Test func aFailedSeekIsTriedAgainWhenNoFurtherRecordsArrive() async throws {
        let fixture = try SinkFixture()
        let (events, messages) = try await fixture.publishTraffic(batches: 30, installs: 10)
        let group = "seek-\(UUID().uuidString)"
        let crashed = try fixture.makeSink(group: group)
        #expect(try await drive(crashed, commit: false) { $0.applied >= messages })
        try await onThread { crashed.stop() }

        // The successor reads every partition from its beginning (no Kafka offset was committed) and must seek to
        // the store's offsets; the first seek of each partition fails.
        let partitions = try fixture.partitionsWithData()
        let restarted = try fixture.makeSink(group: group)
        defer { restarted.stop() }
        restarted.seekFailuresToInject.store(partitions, ordering: .relaxed)
        #expect(try await drive(restarted) { $0.seeks >= partitions })
        #expect(restarted.seekFailuresToInject.load(ordering: .relaxed) == 0)
        #expect(restarted.counters.applied == 0)
        #expect(try fixture.totals().events == events)
    }
}
