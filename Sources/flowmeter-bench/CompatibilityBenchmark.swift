import Foundation
import IngestBenchmarks

#if canImport(Glibc)
    import Glibc
#endif

/// `flowmeter-bench compatibility`: `GET /v1/compatibility` under load, as a page backend would call it.
///
/// Starts `flowmeter serve --kafka none --store …` (the sibling executable), uploads manifests for `--versions` app
/// versions, waits until the answers are in memory, then keeps one request in flight on each of `--connections`
/// keep-alive connections (one client thread polling them all) for `--requests` requests, cycling through the
/// versions. Reports the latency percentiles each request saw (send to last byte, client side) and the requests per
/// CPU-second of the serve process (its own CPU from /proc over the run). Bounded: at most `--requests` requests and
/// `--seconds` seconds.
enum CompatibilityBenchmark {
    struct Options {
        var connections = 128
        var requests = 200_000
        var versions = 50
        var seconds = 60.0
        var threads: Int?
        var flowmeterPath: String?
    }

    static func run(_ arguments: [String]) -> Int32 {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            if name == "--help" {
                print(
                    "usage: flowmeter-bench compatibility [--connections 128] [--requests 200000] [--versions 50] "
                        + "[--seconds 60] [--threads N] [--flowmeter PATH]")
                return 0
            }
            guard index + 1 < arguments.count else {
                print("error: \(name) needs a value")
                return 2
            }
            let value = arguments[index + 1]
            switch name {
            case "--connections": options.connections = Int(value) ?? options.connections
            case "--requests": options.requests = Int(value) ?? options.requests
            case "--versions": options.versions = Int(value) ?? options.versions
            case "--seconds": options.seconds = Double(value) ?? options.seconds
            case "--threads": options.threads = Int(value)
            case "--flowmeter": options.flowmeterPath = value
            default:
                print("error: unknown option \(name)")
                return 2
            }
            index += 2
        }
        do {
            try measure(options)
            return 0
        } catch {
            print("error: \(error)")
            return 1
        }
    }

    static let adminKey = "bench-admin-0123456789"
    static let readKey = "bench-read-0123456789"
    static let app = "com.example.shop"

    private static func measure(_ options: Options) throws {
        let work = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("flowmeter-bench-compat-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let keys = work.appendingPathComponent("keys.json")
        try Data(
            """
            {"ingestKeys": [{"key": "bench-ingest-0123456789", "apps": ["\(app)"]}], "adminKeys": ["\(adminKey)"],
             "readKeys": [{"key": "\(readKey)", "apps": ["\(app)"]}]}
            """.utf8
        ).write(to: keys)
        let port = try freeLoopbackPort()
        var arguments = [
            "serve", "--listen", "127.0.0.1:\(port)", "--keys", keys.path, "--kafka", "none", "--spool", "none",
            "--store", work.appendingPathComponent("store.sqlite").path, "--detect-interval", "0",
            "--compatibility-refresh", "1s", "--log-level", "warning", "--connection-limit", "4096",
            "--per-ip-connection-limit", "4096", "--dead-letters", work.appendingPathComponent("dead.jsonl").path,
        ]
        if let threads = options.threads { arguments += ["--threads", String(threads)] }
        let serve = try MeasuredProcess(
            name: "flowmeter-serve",
            executable: options.flowmeterPath ?? IngestBenchmark.siblingExecutable("flowmeter"),
            arguments: arguments, environment: ["FLOWMETER_SALT": String(repeating: "62656e6368", count: 4)], cpu: nil,
            logDirectory: work)
        defer { serve.stop() }
        try serve.waitUntilServing(port: port, path: "/healthz", timeout: 30)

        // What a shop's builds upload: a dozen types each.
        guard let uploader = HTTPConnection(host: "127.0.0.1", port: port) else {
            throw BenchmarkError("cannot connect to 127.0.0.1:\(port)")
        }
        let paths = (0..<options.versions).map { version in
            "/v1/compatibility?appID=\(app)&platform=ios&appVersion=5.\(version).0"
        }
        for version in 0..<options.versions {
            let types = (0..<12).map { #""type_\#($0)":{"required":["title"],"optional":["subtitle","imageURL"]}"# }
            let body = Array(
                (#"{"appID":"\#(app)","appVersion":"5.\#(version).0","platform":"ios","build":"\#(version)00","#
                    + #""types":{\#(types.joined(separator: ","))},"arrangements":["vertical","grid"]}"#).utf8)
            let request =
                Array(
                    ("POST /v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(adminKey)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n").utf8) + body
            guard let answer = uploader.exchange(request), answer.status == 201 else {
                throw BenchmarkError("manifest upload for 5.\(version).0 failed")
            }
        }
        let requests = paths.map {
            Array("GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(readKey)\r\n\r\n".utf8)
        }
        // The answers are in memory after the first refresh past the uploads.
        let ready = Date().addingTimeInterval(30)
        while uploader.exchange(requests[options.versions - 1])?.status != 200 {
            guard Date() < ready else { throw BenchmarkError("the compatibility answers never appeared") }
            usleep(100_000)
        }

        let client = try LatencyClient(port: port, connections: options.connections)
        let before = serve.counters()
        let started = Date()
        let result = try client.run(
            count: options.requests, deadline: started.addingTimeInterval(options.seconds)
        ) { requests[$0 % requests.count] }
        let elapsed = Date().timeIntervalSince(started)
        let cpu = serve.counters().cpuSeconds - before.cpuSeconds
        let sorted = result.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000
        }
        print("GET /v1/compatibility, \(options.connections) connections, \(options.versions) versions")
        print("requests:               \(result.latencies.count) (\(IngestBenchmark.describe(result.statuses)))")
        print("wall seconds:           \(IngestBenchmark.format(elapsed, 2))")
        print("requests per second:    \(IngestBenchmark.format(Double(result.latencies.count) / elapsed))")
        print("serve CPU seconds:      \(IngestBenchmark.format(cpu, 2))")
        print(
            "requests per CPU-second: "
                + IngestBenchmark.format(cpu > 0 ? Double(result.latencies.count) / cpu : 0))
        print(
            "latency ms p50 \(IngestBenchmark.format(percentile(0.50), 3))  p90 \(IngestBenchmark.format(percentile(0.90), 3))"
                + "  p99 \(IngestBenchmark.format(percentile(0.99), 3))  max \(IngestBenchmark.format(percentile(1), 3))"
        )
    }

    /// A loopback port that was free a moment ago.
    private static func freeLoopbackPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchmarkError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchmarkError("could not bind a loopback port") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// One thread, many keep-alive connections, one request in flight on each: every request's latency from its send to
/// the last byte of its answer.
private final class LatencyClient {
    struct Result {
        var latencies: [Double] = []
        var statuses: [Int: Int] = [:]
    }

    private var descriptors: [Int32] = []
    private var buffers: [[UInt8]]
    private var sentAt: [Double]
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    init(port: UInt16, connections: Int) throws {
        buffers = Array(repeating: [], count: connections)
        sentAt = Array(repeating: 0, count: connections)
        for _ in 0..<connections {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard fd >= 0, connected == 0 else {
                if fd >= 0 { close(fd) }
                throw BenchmarkError("could not connect to 127.0.0.1:\(port): errno \(errno)")
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            descriptors.append(fd)
        }
    }

    deinit { descriptors.forEach { _ = close($0) } }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    func run(count: Int, deadline: Date, request: (Int) -> [UInt8]) throws -> Result {
        var result = Result()
        result.latencies.reserveCapacity(count)
        var next = 0
        var inFlight = 0
        for connection in descriptors.indices where next < count {
            try send(request(next), on: connection)
            next += 1
            inFlight += 1
        }
        var polls = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while inFlight > 0 {
            let ready = poll(&polls, nfds_t(polls.count), 30_000)
            guard ready > 0 else { throw BenchmarkError("no answer within 30 s (poll \(ready), errno \(errno))") }
            for connection in polls.indices where polls[connection].revents != 0 {
                polls[connection].revents = 0
                let n = scratch.withUnsafeMutableBytes { recv(descriptors[connection], $0.baseAddress!, $0.count, 0) }
                guard n > 0 else { throw BenchmarkError("connection \(connection) closed") }
                buffers[connection].append(contentsOf: scratch[0..<n])
                guard let status = takeAnswer(on: connection) else { continue }
                result.latencies.append(Self.now() - sentAt[connection])
                result.statuses[status, default: 0] += 1
                inFlight -= 1
                if next < count && Date() < deadline {
                    try send(request(next), on: connection)
                    next += 1
                    inFlight += 1
                }
            }
        }
        return result
    }

    private func send(_ bytes: [UInt8], on connection: Int) throws {
        sentAt[connection] = Self.now()
        let written = bytes.withUnsafeBytes {
            Glibc.send(descriptors[connection], $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL))
        }
        guard written == bytes.count else { throw BenchmarkError("short send on connection \(connection)") }
    }

    /// The status of one whole answer at the front of the connection's buffer (removed), or nil while incomplete.
    private func takeAnswer(on connection: Int) -> Int? {
        let bytes = buffers[connection]
        guard bytes.count >= 4 else { return nil }
        var headerEnd: Int?
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            headerEnd = i
            break
        }
        guard let headerEnd else { return nil }
        let head = String(decoding: bytes[..<headerEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
        var contentLength = 0
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            contentLength = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let total = headerEnd + 4 + contentLength
        guard bytes.count >= total else { return nil }
        buffers[connection].removeFirst(total)
        return status
    }
}
