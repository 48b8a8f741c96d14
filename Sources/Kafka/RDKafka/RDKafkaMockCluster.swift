import CRdKafka
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Owns librdkafka's mock cluster and the handle it lives in; the handle must outlive the cluster.
final class RDKafkaMockCluster: @unchecked Sendable {
    // @unchecked: the mock's functions post commands to its own thread and are safe from any thread.
    private let client: RDKafkaClient
    private let cluster: OpaquePointer
    let bootstrapServers: String
    /// The brokers taken down through ``setBroker(_:up:)`` and not brought up since.
    private let brokersDown = Mutex<Set<Int>>([])

    init(brokers: Int) throws {
        // Errors only: a handle with no bootstrap servers warns about it, which says nothing here.
        client = try RDKafkaClient.make(.producer, properties: ["log_level": "3"])
        guard let cluster = rd_kafka_mock_cluster_new(client.handle, Int32(brokers)) else {
            throw KafkaError(.invalidArgument, "could not start a mock cluster", isRetriable: false)
        }
        self.cluster = cluster
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        Self.disableNagle(listeningOn: Self.ports(of: bootstrapServers))
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
        // `client` is released after this, destroying the handle once the cluster is gone.
    }

    func createTopic(_ name: String, partitions: Int, replicationFactor: Int) throws(KafkaError) {
        try check(rd_kafka_mock_topic_create(cluster, name, Int32(partitions), Int32(replicationFactor)))
    }

    /// Takes broker `id` down or brings it back up; asking for the state it is in does nothing.
    ///
    /// Going down holds a connection to the broker meanwhile (``MockBrokerPortHold``): librdkafka binds the
    /// broker's port again as it goes down and aborts the process when another socket took it in between.
    func setBroker(_ id: Int, up: Bool) throws(KafkaError) {
        let broker = Int32(id)
        guard brokersDown.withLock({ $0.contains(id) }) == up else { return }
        if up {
            try check(rd_kafka_mock_broker_set_up(cluster, broker))
            brokersDown.withLock { _ = $0.remove(id) }
            // A broker brought back up listens on a new socket.
            Self.disableNagle(listeningOn: Self.ports(of: bootstrapServers))
        } else {
            let hold = Self.holdPort(of: id, port: port(of: id))
            try check(rd_kafka_mock_broker_set_down(cluster, broker))
            brokersDown.withLock { _ = $0.insert(id) }
            hold?.release()
        }
    }

    /// A connection holding broker `id`'s port (``MockBrokerPortHold``). A loaded machine, or a broker given a long
    /// round-trip time, can take seconds to answer: three tries of up to 30 s each. Failing that the broker goes down
    /// unprotected, which is said on standard error, since an abort would then follow only by chance.
    private static func holdPort(of id: Int, port: UInt16?) -> MockBrokerPortHold? {
        guard let port else { return nil }
        for _ in 0..<3 {
            if let hold = MockBrokerPortHold(port: port, timeout: 30) { return hold }
        }
        FileHandle.standardError.write(
            Data("mock cluster: no connection holds broker \(id)'s port as it goes down\n".utf8))
        return nil
    }

    /// The port broker `id` listens on: the mock numbers its brokers from 1 in the order of its bootstrap list.
    private func port(of id: Int) -> UInt16? {
        let ports = Self.portList(of: bootstrapServers)
        return ports.indices.contains(id - 1) ? ports[id - 1] : nil
    }

    func setRoundTripTime(broker: Int, milliseconds: Int) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_rtt(cluster, Int32(broker), Int32(milliseconds)))
    }

    func setPartitionLeader(topic: String, partition: Int, broker: Int) throws(KafkaError) {
        try check(rd_kafka_mock_partition_set_leader(cluster, topic, Int32(partition), Int32(broker)))
    }

    func pushRequestErrors(api: Int16, errors: [KafkaError.Code]) {
        let values = errors.map(\.rdKafkaValue)
        values.withUnsafeBufferPointer { buffer in
            rd_kafka_mock_push_request_errors_array(cluster, api, buffer.count, buffer.baseAddress)
        }
    }

    func clearRequestErrors(api: Int16) {
        rd_kafka_mock_clear_request_errors(cluster, api)
    }

    func setTopicError(_ topic: String, error: KafkaError.Code) {
        rd_kafka_mock_topic_set_error(cluster, topic, error.rdKafkaValue)
    }

    /// The ports of a `host:port,host:port` list.
    static func ports(of servers: String) -> Set<UInt16> {
        Set(portList(of: servers))
    }

    /// The ports of a `host:port,host:port` list, in its order.
    static func portList(of servers: String) -> [UInt16] {
        servers.split(separator: ",").compactMap { $0.split(separator: ":").last.flatMap { UInt16($0) } }
    }

    /// Turns Nagle's algorithm off on this process's listening TCP sockets bound to one of `ports`, which Linux
    /// passes on to every connection they accept; returns how many it changed.
    ///
    /// librdkafka 2.0.2's mock brokers (Debian 12's) leave Nagle on for the connections they accept, where a real
    /// broker turns it off (Kafka sets `TCP_NODELAY` on every accepted socket). With Nagle on, a produce response
    /// written in more than one piece can wait for the client's delayed ACK: runs of `make bench` fell into a mode
    /// with a median delivery 6 ms later and the collector's events per CPU-second 15 % lower, by chance per run.
    /// The sockets are found in `/proc/self/fd` (Linux only) before any client can connect.
    @discardableResult
    static func disableNagle(listeningOn ports: Set<UInt16>) -> Int {
        #if os(Linux)
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            var changed = 0
            for descriptor in descriptors.compactMap(Int32.init) where isListener(descriptor, onOneOf: ports) {
                var one: Int32 = 1
                if setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    == 0
                {
                    changed += 1
                }
            }
            return changed
        #else
            return 0
        #endif
    }

    #if os(Linux)
        private static func isListener(_ descriptor: Int32, onOneOf ports: Set<UInt16>) -> Bool {
            var listening: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening == 1 else {
                return false
            }
            var address = sockaddr_storage()
            var addressLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &addressLength) }
            }
            guard named == 0 else { return false }
            let port: UInt16
            switch Int32(address.ss_family) {
            case AF_INET:
                port = withUnsafeBytes(of: &address) { $0.load(as: sockaddr_in.self).sin_port }
            case AF_INET6:
                port = withUnsafeBytes(of: &address) { $0.load(as: sockaddr_in6.self).sin6_port }
            default:
                return false
            }
            return ports.contains(UInt16(bigEndian: port))
        }
    #endif

    private func check(_ error: rd_kafka_resp_err_t, file: String = #fileID, line: UInt = #line) throws(KafkaError) {
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw RDKafkaError.make(error, file: file, line: line)
        }
    }
}
