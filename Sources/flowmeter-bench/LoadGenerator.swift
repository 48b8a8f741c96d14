import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A closed-loop HTTP/1.1 load generator over raw keep-alive sockets: each connection posts the next prepared request
/// as soon as the previous answer arrived, or paces itself to a target rate. Bounded in requests and in time.
final class LoadGenerator: Sendable {
    /// One prepared request: the whole HTTP message, ready to write.
    struct Request: Sendable {
        var bytes: [UInt8]
        var events = 50
        /// Where the batch id's 36 characters sit in `bytes`; each send writes a unique id there, so the collector's
        /// retry dedupe never mistakes a benchmark request for a retry.
        var batchIDRange: Range<Int>? = nil
    }

    /// What one run measured.
    struct Result: Sendable {
        var requests = 0
        var events = 0
        var statusCounts: [Int: Int] = [:]
        var failures = 0
        var latenciesMicros: [UInt32] = []
        var elapsed: Double = 0

        func percentile(_ p: Double) -> Double {
            guard !latenciesMicros.isEmpty else { return 0 }
            let sorted = latenciesMicros.sorted()
            let index = min(sorted.count - 1, Int(Double(sorted.count - 1) * p))
            return Double(sorted[index]) / 1000
        }
    }

    let host: String
    let port: UInt16
    let requests: [Request]

    init(host: String, port: UInt16, requests: [Request]) {
        self.host = host
        self.port = port
        self.requests = requests
    }

    /// Runs `connections` keep-alive connections for at most `seconds` and `maxRequests` requests in total; with
    /// `ratePerSecond`, the connections together pace themselves to that many requests a second.
    func run(connections: Int, seconds: Double, maxRequests: Int, ratePerSecond: Double? = nil) -> Result {
        let issued = Atomic<Int>(0)
        let results = Mutex<[Result]>([])
        let start = Date()
        let deadline = start.addingTimeInterval(seconds)
        let group = DispatchGroup()
        let run = Self.runs.wrappingAdd(1, ordering: .relaxed).newValue
        for worker in 0..<connections {
            group.enter()
            let thread = Thread { [self] in
                let result = self.worker(
                    index: worker, run: run, issued: issued, maxRequests: maxRequests, deadline: deadline,
                    interval: ratePerSecond.map { Double(connections) / $0 })
                results.withLock { $0.append(result) }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        var total = Result()
        for part in results.withLock({ $0 }) {
            total.requests += part.requests
            total.events += part.events
            total.failures += part.failures
            total.latenciesMicros += part.latenciesMicros
            total.statusCounts.merge(part.statusCounts, uniquingKeysWith: +)
        }
        total.elapsed = Date().timeIntervalSince(start)
        return total
    }

    private func worker(
        index: Int, run: UInt16, issued: borrowing Atomic<Int>, maxRequests: Int, deadline: Date, interval: Double?
    ) -> Result {
        var result = Result()
        var connection: HTTPConnection?
        var next = index % requests.count
        var sent: UInt32 = 0
        var scratch: [UInt8] = []
        var dueAt = Date().timeIntervalSinceReferenceDate + (interval ?? 0) * Double(index) / 8
        let end = deadline.timeIntervalSinceReferenceDate
        while true {
            let now = Date().timeIntervalSinceReferenceDate
            if now >= end { break }
            if let interval {
                if dueAt > now {
                    usleep(UInt32(min(dueAt - now, end - now) * 1_000_000))
                    continue
                }
                dueAt += interval
            }
            if issued.wrappingAdd(1, ordering: .relaxed).oldValue >= maxRequests { break }
            if connection == nil {
                connection = HTTPConnection(host: host, port: port)
                if connection == nil {
                    result.failures += 1
                    usleep(10_000)
                    continue
                }
            }
            let request = requests[next]
            next = (next + 1) % requests.count
            var bytes = request.bytes
            if let range = request.batchIDRange {
                scratch = request.bytes
                Self.writeUniqueID(
                    run: run, worker: UInt16(truncatingIfNeeded: index), sequence: sent, into: &scratch, at: range)
                sent &+= 1
                bytes = scratch
            }
            let began = DispatchTime.now().uptimeNanoseconds
            guard let (status, keepAlive) = connection!.exchange(bytes) else {
                result.failures += 1
                connection = nil
                continue
            }
            let micros = (DispatchTime.now().uptimeNanoseconds - began) / 1000
            result.latenciesMicros.append(UInt32(min(micros, UInt64(UInt32.max))))
            result.requests += 1
            result.statusCounts[status, default: 0] += 1
            if status == 202 { result.events += request.events }
            if !keepAlive { connection = nil }
        }
        return result
    }
}

extension LoadGenerator {
    /// Overwrites the last 12 hex digits of the UUID at `range` with the worker and its sequence number, and the
    /// 4 before the last dash with the run, so no run repeats an id of an earlier one: the collector answers a
    /// batch id it saw in the last 10 minutes from memory, without publishing, which would flatter every run after
    /// the first.
    static func writeUniqueID(
        run: UInt16, worker: UInt16, sequence: UInt32, into bytes: inout [UInt8], at range: Range<Int>
    ) {
        let digits = Array("0123456789ABCDEF".utf8)
        let value = UInt64(worker) << 32 | UInt64(sequence)
        for position in 0..<12 {
            bytes[range.upperBound - 1 - position] = digits[Int((value >> (4 * UInt64(position))) & 0xF)]
        }
        for position in 0..<4 {
            bytes[range.upperBound - 14 - position] = digits[Int((run >> (4 * UInt16(position))) & 0xF)]
        }
    }

    /// Runs started by any generator in this process, so every run's batch ids differ from every other's.
    static let runs = Atomic<UInt16>(0)
}

/// One blocking keep-alive connection that writes a request and reads exactly one response.
final class HTTPConnection {
    private let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var pending: [UInt8] = []

    init?(host: String, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Writes `request` and reads one response; returns its status and whether the connection stays open, or nil when
    /// the connection failed.
    func exchange(_ request: [UInt8]) -> (status: Int, keepAlive: Bool)? {
        exchangeReturningBody(request).map { ($0.status, $0.keepAlive) }
    }

    /// `GET path` on this connection; the body as text, or nil when the exchange failed.
    func get(_ path: String) -> String? {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard let answer = exchangeReturningBody(request, keepsBody: true) else { return nil }
        return String(decoding: answer.body, as: UTF8.self)
    }

    private func exchangeReturningBody(
        _ request: [UInt8], keepsBody: Bool = false
    ) -> (status: Int, keepAlive: Bool, body: [UInt8])? {
        var written = 0
        while written < request.count {
            let n = request.withUnsafeBytes { send(descriptor, $0.baseAddress! + written, request.count - written, 0) }
            if n <= 0 { return nil }
            written += n
        }
        // Read until the header block ends, then the Content-Length body.
        var headerEnd: Int?
        while headerEnd == nil {
            guard fill() else { return nil }
            headerEnd = findHeaderEnd()
        }
        let head = String(decoding: pending[..<headerEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.count >= 12,
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else { return nil }
        var contentLength = 0
        var keepAlive = true
        for line in lines.dropFirst() {
            let lower = line.lowercased()
            if lower.hasPrefix("content-length:") {
                contentLength = Int(lower.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
            } else if lower.hasPrefix("connection:") && lower.contains("close") {
                keepAlive = false
            }
        }
        let total = headerEnd! + 4 + contentLength
        while pending.count < total {
            guard fill() else { return nil }
        }
        let body = keepsBody ? Array(pending[(headerEnd! + 4)..<total]) : []
        pending.removeFirst(total)
        return (status, keepAlive, body)
    }

    private func fill() -> Bool {
        let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
        if n <= 0 { return false }
        pending.append(contentsOf: buffer[0..<n])
        return true
    }

    private func findHeaderEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for i in 0...(pending.count - 4)
        where pending[i] == 13 && pending[i + 1] == 10 && pending[i + 2] == 13 && pending[i + 3] == 10 {
            return i
        }
        return nil
    }
}
