import FlowmeterCLI
import Foundation
import TestSupport
import Testing

/// `--kafka-option`, `--kafka-option-file`, `FLOWMETER_KAFKA_OPTION_…` and a `kafka` object in `--config` reach
/// librdkafka's check on every command that talks to Kafka, and a bad property stops the command before it starts.
@Suite struct KafkaOptionsTests {
    static let commands: [[String]] = [
        ["serve", "--kafka", "127.0.0.1:1", "--keys", "/nonexistent/keys.json"],
        ["sink", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite"],
        ["store", "rebuild", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite"],
        ["watch", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite", "--once"],
        [
            "deploys", "add", "--kafka", "127.0.0.1:1", "--no-store", "--service", "api", "--version", "1",
            "--finished-at", "now",
        ],
    ]

    @Test(arguments: commands)
    func aMisspelledPropertyIsAUsageErrorWithTheNearestKey(command: [String]) async {
        let result = await CLI.run(command + ["--kafka-option", "sasl.usernme=flowmeter"])
        #expect(result.status == 2, "\(command): \(result.standardError)")
        #expect(
            result.standardError.contains("unknown Kafka property 'sasl.usernme' (did you mean 'sasl.username'?)"),
            "\(command): \(result.standardError)")
    }

    @Test(arguments: [
        (["--kafka-option", "security.protocol=tls"], "invalid value for Kafka property 'security.protocol'"),
        (["--kafka-option", "enable.idempotence=false"], "'enable.idempotence' is set by Flowmeter itself"),
        (["--kafka-option", "group.id=other"], "set the consumer group with --group"),
        (["--kafka-option", "no-equals-sign"], "invalid value for --kafka-option: expected KEY=VALUE"),
        (
            ["--kafka-option-file", "sasl.password=/nonexistent/kafka-password"],
            "--kafka-option-file sasl.password: cannot read the file '/nonexistent/kafka-password'"
        ),
    ])
    func unusableOptionsStopTheSink(arguments: [String], message: String) async {
        let result = await CLI.run(
            ["sink", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite"] + arguments)
        #expect(result.status == 2, "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
    }

    @Test func theEnvironmentNamesPropertiesWithUnderscoresAsDots() async {
        let result = await CLI.run(
            ["sink", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite"],
            environment: ["FLOWMETER_KAFKA_OPTION_SECURITY_PROTOCL": "SSL"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("unknown Kafka property 'security.protocl'"), "\(result.standardError)")
        #expect(result.standardError.contains("did you mean 'security.protocol'?"))
    }

    @Test func anEnvironmentFileVariableReadsTheSecretFromTheFile() async {
        let result = await CLI.run(
            ["sink", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite"],
            environment: ["FLOWMETER_KAFKA_OPTION_SASL_PASSWORD_FILE": "/nonexistent/from-env"])
        #expect(result.status == 2)
        #expect(
            result.standardError.contains(
                "--kafka-option-file sasl.password: cannot read the file '/nonexistent/from-env'"),
            "\(result.standardError)")
    }

    @Test func theWholeVariableHoldsOnePairALine() async {
        // A value may hold commas (debug=broker,security): pairs are separated by newlines, not commas.
        let result = await CLI.run(
            ["sink", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite"],
            environment: ["FLOWMETER_KAFKA_OPTION": "debug=broker,security\nsasl.usernme=flowmeter"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("unknown Kafka property 'sasl.usernme'"), "\(result.standardError)")
        #expect(!result.standardError.contains("'debug'"), "\(result.standardError)")
    }

    @Test func helpNamesThePerKeyVariables() async {
        let help = await CLI.run(["serve", "--help"]).standardOutput
        #expect(help.contains("[env: FLOWMETER_KAFKA_OPTION_<KEY>]"))
        #expect(help.contains("[env: FLOWMETER_KAFKA_OPTION_<KEY>_FILE]"))
    }

    @Test func theCommandLineOverridesTheEnvironmentKeyByKey() async {
        // The environment's bad value is replaced by the command line's good one; its other key still applies.
        let result = await CLI.run(
            [
                "sink", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite", "--kafka-option",
                "security.protocol=SSL",
            ],
            environment: [
                "FLOWMETER_KAFKA_OPTION_SECURITY_PROTOCOL": "tls", "FLOWMETER_KAFKA_OPTION_SOCKET_TIMEOUT_MS": "soon",
            ])
        #expect(result.status == 2)
        #expect(!result.standardError.contains("security.protocol"), "\(result.standardError)")
        #expect(result.standardError.contains("'socket.timeout.ms'"), "\(result.standardError)")
    }

    @Test func aKafkaObjectInTheConfigurationFileIsLibrdkafkasProperties() async throws {
        let directory = try TemporaryDirectory(prefix: "flowmeter-kafka-config")
        defer { directory.remove() }
        let path = directory.file("config.json")
        try Data(
            #"{"kafka": {"bootstrap.servers": "127.0.0.1:1", "security.protocl": "SSL", "socket.timeout.ms": 5000}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: path))
        // No --kafka: the object's bootstrap.servers is it.
        let result = await CLI.run(["sink", "--config", path, "--store", "/nonexistent/dir/s.sqlite"])
        #expect(result.status == 2)
        #expect(!result.standardError.contains("missing required option --kafka"), "\(result.standardError)")
        #expect(result.standardError.contains("did you mean 'security.protocol'?"), "\(result.standardError)")
    }

    @Test func aSecretIsNeverEchoedAndOnTheCommandLineIsWarnedAbout() async {
        let password = "pw-\(UUID().uuidString)"
        let result = await CLI.run(
            [
                "sink", "--kafka", "127.0.0.1:1", "--store", "/nonexistent/dir/s.sqlite", "--kafka-option",
                "sasl.password=\(password)", "--kafka-option", "security.protocol=tls",
            ])
        #expect(result.status == 2)
        #expect(result.standardError.contains("--kafka-option was given on the command line"))
        #expect(result.standardError.contains("security.protocol"))
        #expect(!(result.standardError + result.standardOutput).contains(password))
        let help = await CLI.run(["sink", "--help"])
        #expect(help.standardOutput.contains("--kafka-option-file"))
    }
}
