public import Foundation
import Synchronization

/// An append-only JSON Lines file of the messages a sink could not use, so nothing it skips is lost unseen.
///
/// One line per message: `{"at", "topic", "partition", "offset", "reason", "value"}` with the value as base64 (it may
/// be any bytes). The file is created on the first dead letter, never before, and each line is written with one
/// `write(2)` on a descriptor opened with `O_APPEND`, so a crash leaves at most a torn last line. Safe to call from
/// any thread.
public final class DeadLetterFile: Sendable {
    /// Where the lines go.
    public let path: String
    private let descriptor = Mutex<Int32>(-1)

    /// A file at `path`, opened when the first letter arrives.
    public init(path: String) {
        self.path = path
    }

    deinit {
        let fd = descriptor.withLock { $0 }
        if fd >= 0 { close(fd) }
    }

    /// Appends one message; throws ``SinkError`` (`deadLetterFailed`) when the file cannot be opened or written.
    public func append(
        topic: String, partition: Int, offset: Int64, reason: String, value: [UInt8], at time: Date = Date()
    ) throws(SinkError) {
        var line: [String: Any] = [:]
        line["at"] = ISO8601DateFormatter().string(from: time)
        line["topic"] = topic
        line["partition"] = partition
        line["offset"] = offset
        line["reason"] = reason
        line["value"] = Data(value).base64EncodedString()
        guard var bytes = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) else {
            throw SinkError(.deadLetterFailed, "could not encode a dead letter")
        }
        bytes.append(UInt8(ascii: "\n"))
        try descriptor.withLock { fd throws(SinkError) in
            if fd < 0 {
                fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
                guard fd >= 0 else {
                    throw SinkError(.deadLetterFailed, "cannot open \(path): \(String(cString: strerror(errno)))")
                }
            }
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == bytes.count else {
                throw SinkError(.deadLetterFailed, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
    }
}
