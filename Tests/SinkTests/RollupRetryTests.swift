import Collector
import Foundation
import Kafka
import RollupStore
import Rollups
import Sink
import TestSupport
import Testing

/// The collector's rollup publisher under a Kafka outage, end to end into the store through the sink.
@Suite struct RollupRetryTests {
    @Test func rollupsFailedWhileBrokersWereDownArriveOnceWhenTheyAreBack() async throws {
        let fixture = try SinkFixture()
        var configuration = CollectorConfiguration(
            keys: try IngestKeys(json: Data(#"{"ingestKeys": [{"key": "k-retry-0123456789", "apps": ["*"]}]}"#.utf8)))
        configuration.port = 0
        configuration.kafka = .brokers(fixture.kafka.bootstrapServers)
        configuration.salt = Array("retry-test-salt-0123456789".utf8)
        configuration.collectorID = "retry-test"
        // Only explicit flushes, so the outage covers exactly one; deliveries give up quickly while brokers are down.
        configuration.rollupInterval = .seconds(3600)
        configuration.kafkaProperties = ["message.timeout.ms": "2000"]
        configuration.logLevel = .error
        let collector = try makeCollector(configuration: configuration)
        try collector.start()

        let port = collector.port
        let expected = try await HTTPTestClient.onThread { () throws -> Int64 in
            var total: Int64 = 0
            for index in 0..<10 {
                let count = 1 + index % 3
                total += Int64(count)
                let body =
                    #"{"id":"retry-\#(index)","sentAt":"\#(Date().formatted(.iso8601))","client":{"appID":"com.example.shop","#
                    + #""appVersion":"5.2.1","platform":"ios","buildConfiguration":"release","installID":"I-\#(index % 4)"},"#
                    + #""events":[{"kind":"unknownType","widgetType":"hologram","count":\#(count),"#
                    + #""occurredAt":"\#(Date().addingTimeInterval(-5).formatted(.iso8601))"}]}"#
                let client = try HTTPTestClient(port: port, readTimeout: .seconds(15))
                defer { client.close() }
                let answer = try client.request(
                    "POST", "/v1/diagnostics",
                    headers: [("Content-Type", "application/json"), ("Authorization", "Bearer k-retry-0123456789")],
                    body: Array(body.utf8))
                try #require(answer.status == 202, "batch \(index) answered \(answer.status): \(answer.bodyText)")
            }
            return total
        }

        // The flush happens with every broker down: its deliveries time out and wait for the next flush.
        try fixture.kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let sent = await collector.flushRollups()
        #expect(sent > 0)
        let deadline = ContinuousClock.now + .seconds(20)
        while collector.pendingRollups < sent && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(collector.pendingRollups == sent)
        let errors = collector.metrics.registry.render().split(separator: "\n")
            .first { $0.hasPrefix("flowmeter_rollup_delivery_errors_total ") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
        #expect((errors ?? 0) >= Double(sent))

        // Brokers back: the next flushes resend the same messages, and the sink brings them into the store once.
        try fixture.kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        let sink = try fixture.makeSink(group: "retry-\(UUID().uuidString)")
        defer { sink.stop() }
        // Alone the whole test takes about 10 s; under a filtered parallel `swift test` on two cores this wait missed
        // a 30 s bound twice (the producer's reconnect backoff, the sink's group join), so the bound is generous: the
        // loop ends as soon as the store has caught up.
        let caughtUp = try await onThread { () throws -> Bool in
            let deadline = ContinuousClock.now + .seconds(90)
            while ContinuousClock.now < deadline {
                if collector.pendingRollups > 0 { collector.flushRollupsNow() }
                try sink.pollOnce()
                // Series and version rollups travel as separate messages: wait for both kinds.
                let totals = try fixture.totals()
                if totals.events >= expected && totals.batches >= 10 && collector.pendingRollups == 0 { return true }
            }
            return false
        }
        #expect(caughtUp)
        // A little longer, so a late duplicate would have arrived: the store still holds each event once.
        try await onThread {
            let settle = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < settle { try sink.pollOnce() }
        }
        let totals = try fixture.totals()
        #expect(totals.events == expected)
        #expect(totals.batches == 10)
        await collector.shutdown()
    }
}

extension Collector {
    /// `flushRollups()` from a thread that may block (the test's polling thread).
    fileprivate func flushRollupsNow() {
        let done = DispatchSemaphore(value: 0)
        Task {
            await flushRollups()
            done.signal()
        }
        done.wait()
    }
}
