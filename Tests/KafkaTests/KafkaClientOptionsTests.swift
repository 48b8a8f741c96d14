import Kafka
import TestSupport
import Testing

@Suite struct KafkaClientOptionsTests {
    @Test func managedKafkaSettingsPassLibrdkafkasCheck() throws {
        let options = KafkaClientOptions([
            "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "flowmeter",
            "sasl.password": "s3cret", "ssl.ca.location": "/etc/ssl/certs/ca.pem", "message.timeout.ms": "120000",
        ])
        #expect(try options.validated() == options)
    }

    @Test(arguments: [
        ("sasl.usernme", "flowmeter", "unknown Kafka property 'sasl.usernme' (did you mean 'sasl.username'?)"),
        ("security.protocl", "SSL", "(did you mean 'security.protocol'?)"),
        ("no.such.thing.anywhere", "1", "unknown Kafka property 'no.such.thing.anywhere': see librdkafka"),
        ("security.protocol", "tls", "invalid value for Kafka property 'security.protocol'"),
        ("socket.timeout.ms", "soon", "invalid value for Kafka property 'socket.timeout.ms'"),
        ("enable.idempotence", "false", "'enable.idempotence' is set by Flowmeter itself"),
        ("bootstrap.servers", "b:9092", "set the brokers with --kafka"),
        ("group.id", "mine", "set the consumer group with --group"),
    ])
    func unusablePropertiesAreNamedBeforeAnyClientIsMade(key: String, value: String, message: String) {
        let error = #expect(throws: KafkaError.self) { try KafkaClientOptions([key: value]).validated() }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test func secretsAreRedactedInTheDescription() {
        let options = KafkaClientOptions([
            "sasl.password": "hunter2", "ssl.key.password": "k3y", "sasl.oauthbearer.client.secret": "c1ient",
            "ssl.key.pem": "-----BEGIN PRIVATE KEY-----", "sasl.username": "flowmeter",
        ])
        #expect(
            options.description
                == "sasl.oauthbearer.client.secret=[redacted], sasl.password=[redacted], sasl.username=flowmeter, "
                + "ssl.key.password=[redacted], ssl.key.pem=[redacted]")
        #expect(KafkaClientOptions.isSecret("SASL.PASSWORD"))
        #expect(!KafkaClientOptions.isSecret("ssl.ca.location"))
    }

    @Test(arguments: [
        (KafkaError(.ssl, "SSL handshake failed: certificate verify failed"), true, true),
        (KafkaError(.authentication, "SASL authentication error: Authentication failed"), true, false),
        (
            KafkaError(
                .transport,
                "Receive failed: error:0A00045C:SSL routines::tlsv13 alert certificate required: "
                    + "SSL alert number 116"), true, true
        ),
        (KafkaError(.transport, "Receive failed: SSL alert number 0: close notify"), false, false),
        (KafkaError(.transport, "Connection refused (after 0ms in state CONNECT)"), false, false),
        (KafkaError(.allBrokersDown, "3/3 brokers are down"), false, false),
    ])
    func connectionSettingsFaultsAreTLSAndSASLRefusals(error: KafkaError, isSettingsFault: Bool, isTLS: Bool) {
        #expect(error.isConnectionSettingsFault == isSettingsFault)
        #expect(error.isTLSFailure == isTLS)
    }

    /// SASL settings reach librdkafka: the producer asks the plain listener of the mock cluster for a SASL handshake
    /// it cannot complete (the mock broker speaks no SCRAM), and the failure is the producer's connection problem,
    /// with librdkafka's reason, not a silent retry.
    @Test func aSASLHandshakeAgainstAPlainListenerIsAConnectionProblem() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        var configuration = KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.additionalProperties = try KafkaClientOptions([
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": "flowmeter",
            "sasl.password": "hunter2",
        ]).validated().properties
        let producer = try KafkaProducer(configuration: configuration)
        #expect(await eventually { producer.connectionProblem != nil })
        let problem = try #require(producer.connectionProblem)
        #expect(problem.code == .authentication, "\(problem)")
        #expect(problem.message.contains("SASL Handshake not supported by broker"), "\(problem)")
        #expect(!problem.message.contains("hunter2"))
        _ = await producer.shutdown(timeout: .zero)
    }

    @Test func aConsumersTLSFailureIsItsConnectionProblem() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("flowmeter.tls-probe", partitions: 1)
        var configuration = KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: "tls")
        configuration.additionalProperties = ["security.protocol": "SSL"]
        let consumer = try KafkaConsumer(configuration: configuration)
        defer { consumer.close() }
        try consumer.subscribe(topics: ["flowmeter.tls-probe"])
        #expect(consumer.connectionProblem == nil)
        // Errors reach the consumer as events of its queue: polled without waiting, the problem is noted.
        let noted = await eventually {
            _ = try? consumer.poll(timeout: .zero)
            return consumer.connectionProblem != nil
        }
        #expect(noted)
        let problem = try #require(consumer.connectionProblem)
        #expect(ConnectionCodes.all.contains(problem.code), "\(problem)")
    }

    @Test func aTLSClientAgainstAPlainListenerIsAConnectionProblem() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        var configuration = KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.additionalProperties = ["security.protocol": "SSL"]
        let producer = try KafkaProducer(configuration: configuration)
        #expect(await eventually { producer.connectionProblem != nil })
        let problem = try #require(producer.connectionProblem)
        #expect(ConnectionCodes.all.contains(problem.code), "\(problem)")
        _ = await producer.shutdown(timeout: .zero)
    }
}

private enum ConnectionCodes {
    static let all: Set<KafkaError.Code> = [.ssl, .authentication, .transport, .allBrokersDown]
}
