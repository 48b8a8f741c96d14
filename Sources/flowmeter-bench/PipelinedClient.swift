import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A load client on one thread that keeps one request in flight on each of several keep-alive connections.
///
/// Requests go out in a fixed order, request `i` on connection `i % connections`; the answer on a connection is read
/// in full before that connection's next request is written. The order of the requests the collector sees, and the
/// bytes of each, are therefore the same in every run, which is what `flowmeter-bench instructions` needs.
final class PipelinedClient {
    /// What a run of requests got back.
    struct Totals: Sendable {
        /// Answers read.
        var requests = 0
        /// The sum of `accepted` over the 202 bodies.
        var acceptedEvents = 0
        /// Answers by status code.
        var statuses: [Int: Int] = [:]

        /// Every answer counted in order, for a log line: `202×2000`.
        var statusSummary: String {
            statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
        }
    }

    /// Why a run stopped early.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptors: [Int32]
    private var buffers: [[UInt8]]
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    /// Opens `connections` connections to 127.0.0.1:`port`; throws when one cannot be opened.
    init(port: UInt16, connections: Int) throws {
        var descriptors: [Int32] = []
        for _ in 0..<connections {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else {
                descriptors.forEach { _ = close($0) }
                throw Failure(description: "socket() failed: errno \(errno)")
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                descriptors.forEach { _ = close($0) }
                throw Failure(description: "could not connect to 127.0.0.1:\(port): errno \(errno)")
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            // Under Valgrind an answer can take seconds; a dead collector still ends the run.
            var timeout = timeval(tv_sec: 120, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            descriptors.append(fd)
        }
        self.descriptors = descriptors
        buffers = Array(repeating: [], count: connections)
    }

    deinit { descriptors.forEach { _ = close($0) } }

    /// Sends `count` requests, the `i`-th being `request(i)`, and reads every answer; throws when a connection fails
    /// or closes.
    func run(count: Int, request: (Int) -> [UInt8]) throws -> Totals {
        var totals = Totals()
        let width = descriptors.count
        for index in 0..<min(count, width) {
            try send(request(index), on: index)
        }
        for index in 0..<count {
            let connection = index % width
            let (status, accepted) = try receive(on: connection)
            totals.requests += 1
            totals.statuses[status, default: 0] += 1
            totals.acceptedEvents += accepted
            if index + width < count {
                try send(request(index + width), on: connection)
            }
        }
        return totals
    }

    private func send(_ bytes: [UInt8], on connection: Int) throws {
        let fd = descriptors[connection]
        try bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + written, raw.count - written, Int32(MSG_NOSIGNAL))
                guard n > 0 else {
                    throw Failure(description: "send failed on connection \(connection): errno \(errno)")
                }
                written += n
            }
        }
    }

    /// Reads one whole answer: its status and the `accepted` count of a 202 body (0 for other statuses).
    private func receive(on connection: Int) throws -> (status: Int, accepted: Int) {
        var headerEnd = Self.headerEnd(in: buffers[connection])
        while headerEnd == nil {
            try fill(connection)
            headerEnd = Self.headerEnd(in: buffers[connection])
        }
        let head = String(decoding: buffers[connection][..<headerEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.count >= 12, let status = Int(statusLine.dropFirst(9).prefix(3))
        else { throw Failure(description: "not an HTTP answer on connection \(connection): \(head.prefix(80))") }
        var contentLength = 0
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            contentLength = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let total = headerEnd! + 4 + contentLength
        while buffers[connection].count < total {
            try fill(connection)
        }
        let body = String(decoding: buffers[connection][(headerEnd! + 4)..<total], as: UTF8.self)
        buffers[connection].removeFirst(total)
        return (status, status == 202 ? Self.accepted(in: body) : 0)
    }

    private func fill(_ connection: Int) throws {
        let n = scratch.withUnsafeMutableBytes { recv(descriptors[connection], $0.baseAddress!, $0.count, 0) }
        guard n > 0 else {
            throw Failure(description: "connection \(connection) closed or timed out (recv \(n), errno \(errno))")
        }
        buffers[connection].append(contentsOf: scratch[0..<n])
    }

    private static func headerEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// The `accepted` number of a 202 body (`{"accepted":N,...}`), or 0.
    static func accepted(in body: String) -> Int {
        guard let range = body.range(of: #""accepted":"#) else { return 0 }
        return Int(body[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}
