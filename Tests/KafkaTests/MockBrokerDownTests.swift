import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Kafka

#if canImport(Glibc)
    import Glibc
#endif

/// Taking a mock broker down never lets another socket take its port (`RDKafkaMockCluster.setBroker(_:up:)`).
///
/// librdkafka's mock closes a broker's listening socket and binds a new one to the same port at once, asserting
/// that the bind worked. In between, a broker nobody had connected to leaves the port free, and any socket on the
/// machine may take it: a soak run of the suite aborted there ("Failed to bind mock broker socket to Address
/// already in use"), taking every test of the process with it.
@Suite struct MockBrokerDownTests {
    #if os(Linux)
        /// A thread binds the broker's port, without `SO_REUSEADDR`, as fast as it can while the broker goes down and
        /// up again and again; it must never get the port.
        @Test func anotherSocketNeverTakesTheBrokersPortWhileItGoesDown() throws {
            let cluster = try KafkaMockCluster(brokers: 1)
            let port = try #require(RDKafkaMockCluster.ports(of: cluster.bootstrapServers.joined(separator: ",")).first)
            let race = Race()
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                defer { done.signal() }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                while !race.stop.load(ordering: .relaxed) {
                    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                    guard descriptor >= 0 else { continue }
                    let bound = withUnsafePointer(to: &address) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                    // Let go at once: the count is what the test checks. (Without the hold, the mock bound the port
                    // while this socket held it, and librdkafka aborted the process.)
                    close(descriptor)
                    race.attempts.add(1, ordering: .relaxed)
                    if bound == 0 { race.taken.add(1, ordering: .relaxed) }
                }
            }
            defer { race.stop.store(true, ordering: .relaxed) }
            // Without the hold the process aborted within 4 rounds (4 runs of 4).
            for _ in 0..<20 {
                try cluster.setBrokerDown(1)
                try cluster.setBrokerUp(1)
            }
            race.stop.store(true, ordering: .relaxed)
            done.wait()
            #expect(race.attempts.load(ordering: .relaxed) > 20)
            #expect(
                race.taken.load(ordering: .relaxed) == 0, "another socket bound the broker's port while it went down")
        }
    #endif

    /// What the racing thread did.
    private final class Race: Sendable {
        let taken = Atomic(0)
        let attempts = Atomic(0)
        let stop = Atomic(false)
    }
}
