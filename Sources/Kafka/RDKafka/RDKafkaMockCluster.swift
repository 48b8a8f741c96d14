import CRdKafka

/// Owns librdkafka's mock cluster and the handle it lives in; the handle must outlive the cluster.
final class RDKafkaMockCluster: @unchecked Sendable {
    // @unchecked: the mock's functions post commands to its own thread and are safe from any thread.
    private let client: RDKafkaClient
    private let cluster: OpaquePointer
    let bootstrapServers: String

    init(brokers: Int) throws {
        // Errors only: a handle with no bootstrap servers warns about it, which says nothing here.
        client = try RDKafkaClient.make(.producer, properties: ["log_level": "3"])
        guard let cluster = rd_kafka_mock_cluster_new(client.handle, Int32(brokers)) else {
            throw KafkaError(.invalidArgument, "could not start a mock cluster", isRetriable: false)
        }
        self.cluster = cluster
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
        // `client` is released after this, destroying the handle once the cluster is gone.
    }

    func createTopic(_ name: String, partitions: Int, replicationFactor: Int) throws(KafkaError) {
        try check(rd_kafka_mock_topic_create(cluster, name, Int32(partitions), Int32(replicationFactor)))
    }

    func setBroker(_ id: Int, up: Bool) throws(KafkaError) {
        let broker = Int32(id)
        try check(up ? rd_kafka_mock_broker_set_up(cluster, broker) : rd_kafka_mock_broker_set_down(cluster, broker))
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

    private func check(_ error: rd_kafka_resp_err_t, file: String = #fileID, line: UInt = #line) throws(KafkaError) {
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw RDKafkaError.make(error, file: file, line: line)
        }
    }
}
