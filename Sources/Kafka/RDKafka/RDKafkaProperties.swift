import CRdKafka
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What librdkafka itself says about property names and values, asked without making a client.
enum RDKafkaProperties {
    /// librdkafka's answer to one `key=value`.
    enum Verdict: Equatable {
        /// librdkafka takes it.
        case accepted
        /// No property has this name; librdkafka's own message.
        case unknown(String)
        /// The property exists but the value is not one it takes; librdkafka's own message.
        case invalid(String)
    }

    /// Sets `key` to `value` on a throwaway configuration, as `rd_kafka_conf_set` would on the real one.
    static func verdict(key: String, value: String) -> Verdict {
        let configuration = rd_kafka_conf_new()!
        defer { rd_kafka_conf_destroy(configuration) }
        var buffer = [CChar](repeating: 0, count: 512)
        let result = rd_kafka_conf_set(configuration, key, value, &buffer, buffer.count)
        let message = RDKafkaError.string(from: buffer)
        switch result {
        case RD_KAFKA_CONF_OK: return .accepted
        case RD_KAFKA_CONF_UNKNOWN: return .unknown(message)
        default: return .invalid(message)
        }
    }

    /// Every property name this librdkafka knows, global and topic-level, from the table
    /// `rd_kafka_conf_properties_show` prints (the same one as librdkafka's CONFIGURATION.md).
    static let names: [String] = {
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return [] }
        rd_kafka_conf_properties_show(stream)
        fclose(stream)
        guard let buffer else { return [] }
        defer { free(buffer) }
        let table = String(cString: buffer)
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._")
        var names: Set<String> = []
        for line in table.split(separator: "\n") {
            guard let bar = line.firstIndex(of: "|") else { continue }
            let name = line[..<bar].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty, name.allSatisfy(allowed.contains) { names.insert(name) }
        }
        return names.sorted()
    }()
}
