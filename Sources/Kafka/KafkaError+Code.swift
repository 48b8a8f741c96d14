import CRdKafka
public import FlowmeterModels

extension KafkaError {
    /// A librdkafka error code (`rd_kafka_resp_err_t`): negative values are client-side, positive ones come from
    /// brokers. Extensible: any code librdkafka reports can appear, not only the named ones.
    public struct Code: FlowmeterErrorCode {
        /// The numeric value of librdkafka's `rd_kafka_resp_err_t`.
        public let rawValue: Int32

        /// Wraps a raw librdkafka error value.
        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        init(_ error: rd_kafka_resp_err_t) {
            self.rawValue = error.rawValue
        }

        var rdKafkaValue: rd_kafka_resp_err_t {
            rd_kafka_resp_err_t(rawValue: rawValue)
        }

        /// librdkafka's name for the code, such as `_TRANSPORT` or `NOT_LEADER_FOR_PARTITION`.
        public var description: String {
            String(cString: rd_kafka_err2name(rdKafkaValue))
        }

        /// Whether producing the same message again cannot help: the message or the client's rights are at fault.
        public var isPermanent: Bool {
            Self.permanentCodes.contains(self)
        }

        private static let permanentCodes: Set<Code> = [
            .messageSizeTooLarge, .invalidMessage, .invalidMessageSize, .corruptMessage, .topicAuthorizationFailed,
            .clusterAuthorizationFailed, .unknownTopic, .unknownTopicOrPartition, .invalidArgument, .recordListTooLarge,
            .invalidRecord, .unsupportedVersion,
        ]

        /// No error.
        public static let noError = Code(RD_KAFKA_RESP_ERR_NO_ERROR)
        /// A TLS handshake failed (`_SSL`): a certificate not trusted, a hostname that does not match, a TLS
        /// client talking to a plain listener.
        public static let ssl = Code(RD_KAFKA_RESP_ERR__SSL)
        /// SASL authentication failed (`_AUTHENTICATION`): wrong credentials or mechanism.
        public static let authentication = Code(RD_KAFKA_RESP_ERR__AUTHENTICATION)
        /// A broker connection failed or was closed mid-request.
        public static let transport = Code(RD_KAFKA_RESP_ERR__TRANSPORT)
        /// The producer's local queue is full (`queue.buffering.max.messages` or `.kbytes`): answer 503, retry later.
        public static let queueFull = Code(RD_KAFKA_RESP_ERR__QUEUE_FULL)
        /// A message waited longer than `message.timeout.ms` for delivery.
        public static let messageTimedOut = Code(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
        /// An operation (such as a flush) did not finish within its timeout.
        public static let timedOut = Code(RD_KAFKA_RESP_ERR__TIMED_OUT)
        /// The handle hit a fatal error and must be replaced; the producer does that itself.
        public static let fatal = Code(RD_KAFKA_RESP_ERR__FATAL)
        /// A queued message was purged (shutdown or producer rebuild) before it was sent.
        public static let purgedFromQueue = Code(RD_KAFKA_RESP_ERR__PURGE_QUEUE)
        /// An in-flight message was purged (shutdown or producer rebuild); the broker may have written it.
        public static let purgedInFlight = Code(RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)
        /// Every broker connection is down.
        public static let allBrokersDown = Code(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        /// The topic is not known to the cluster (client-side check).
        public static let unknownTopic = Code(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
        /// An argument or configuration value was invalid.
        public static let invalidArgument = Code(RD_KAFKA_RESP_ERR__INVALID_ARG)
        /// The client was shut down or is being destroyed.
        public static let shutDown = Code(RD_KAFKA_RESP_ERR__DESTROY)
        /// The broker does not know the topic or partition.
        public static let unknownTopicOrPartition = Code(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        /// The broker is not the partition's leader (it moved).
        public static let notLeaderForPartition = Code(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
        /// The broker timed out the request.
        public static let requestTimedOut = Code(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
        /// Fewer in-sync replicas than `min.insync.replicas`.
        public static let notEnoughReplicas = Code(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS)
        /// The broker's log directory failed.
        public static let kafkaStorageError = Code(RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR)
        /// The client may not write to or read from the topic.
        public static let topicAuthorizationFailed = Code(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
        /// The client may not perform a cluster-level action (such as idempotent produce).
        public static let clusterAuthorizationFailed = Code(RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)
        /// The message is larger than the broker or topic accepts.
        public static let messageSizeTooLarge = Code(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
        /// The message failed a broker-side check.
        public static let invalidMessage = Code(RD_KAFKA_RESP_ERR_INVALID_MSG)
        /// The message size field is invalid.
        public static let invalidMessageSize = Code(RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE)
        /// The message failed its CRC check.
        public static let corruptMessage = Code(RD_KAFKA_RESP_ERR__BAD_MSG)
        /// The record batch is larger than the broker's segment size.
        public static let recordListTooLarge = Code(RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE)
        /// The broker rejected a record as invalid.
        public static let invalidRecord = Code(RD_KAFKA_RESP_ERR_INVALID_RECORD)
        /// The broker does not support the request's version.
        public static let unsupportedVersion = Code(RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION)
        /// The idempotent producer's sequence numbers went out of order: librdkafka 2.0.2 raises this as fatal.
        public static let outOfOrderSequenceNumber = Code(RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER)
    }
}
