import Kafka
import Testing

@Suite struct KafkaConfigurationTests {
    @Test func producerDefaultsRenderFlowmetersReliabilitySettings() {
        let configuration = KafkaProducerConfiguration(bootstrapServers: ["a:9092", "b:9092"])
        #expect(
            configuration.librdkafkaProperties() == [
                "bootstrap.servers": "a:9092,b:9092",
                "client.id": "flowmeter",
                "enable.idempotence": "true",
                "acks": "all",
                "max.in.flight.requests.per.connection": "5",
                "message.timeout.ms": "600000",
                "socket.timeout.ms": "30000",
                "queue.buffering.max.messages": "500000",
                "queue.buffering.max.kbytes": "524288",
                "linger.ms": "20",
                "compression.codec": "lz4",
                "statistics.interval.ms": "10000",
                "allow.auto.create.topics": "false",
            ])
    }

    @Test func additionalPropertiesAddKeysAndOverrideTypedOnes() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: ["a:9092"])
        configuration.linger = .milliseconds(5)
        configuration.acknowledgements = .leader
        configuration.additionalProperties = ["acks": "0", "reconnect.backoff.max.ms": "1000"]
        let properties = configuration.librdkafkaProperties()
        #expect(properties["linger.ms"] == "5")
        #expect(properties["acks"] == "0")
        #expect(properties["reconnect.backoff.max.ms"] == "1000")
        #expect(properties.count == 14)
    }

    @Test func consumerDefaultsReadFromTheStartAndCommitOnlyWhenTold() {
        let configuration = KafkaConsumerConfiguration(bootstrapServers: ["a:9092"], groupID: "sink")
        #expect(
            configuration.librdkafkaProperties() == [
                "bootstrap.servers": "a:9092",
                "group.id": "sink",
                "client.id": "flowmeter",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": "false",
                "session.timeout.ms": "45000",
            ])
    }

    @Test func librdkafkaAcceptsTheDefaults() async throws {
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: ["127.0.0.1:1"]))
        #expect(await producer.shutdown(timeout: .zero) == 0)
    }

    @Test func anUnknownPropertyIsAPermanentConfigurationError() throws {
        var configuration = KafkaProducerConfiguration(bootstrapServers: ["127.0.0.1:1"])
        configuration.additionalProperties = ["no.such.property": "1"]
        let error = try #require(throws: KafkaError.self) { try KafkaProducer(configuration: configuration) }
        #expect(error.code == .invalidArgument)
        #expect(!error.isRetriable)
        #expect(error.message.contains("no.such.property"))
    }
}
