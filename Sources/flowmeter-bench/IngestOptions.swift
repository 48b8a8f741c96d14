import Foundation

/// The options of `flowmeter-bench ingest`: each matrix dimension can be narrowed, so
/// `make bench BENCH_ARGS="--ack delivered --connections 32 --encodings plain --batches repeated"` measures one row.
struct IngestOptions {
    var acks = ["delivered", "enqueue"]
    var connections = [32, 128]
    var encodings = ["plain", "gzip"]
    var batches = ["distinct", "repeated"]
    var rounds = 3
    var seconds = 8.0
    /// After each run, the collector's CPU and context switches keep counting this long, so `enqueue` mode pays
    /// for delivering what it acknowledged before delivery.
    var settleSeconds = 1.0
    var maxRequests = 5_000_000
    var flowmeterPath: String?
    var peerDirectory: String?
    var skipsPeer = false
    var cpu: Int? = 1
    var batchCount = 512
    /// The repeated batch is the synthetic batch whose id-less JSON is closest to this size.
    var repeatedBatchBytes = 17_000
    var measuresSpool = true
    /// Stop (SIGSTOP) the collector not under load; `--no-pause` keeps both running, to check what pausing changes.
    var pausesIdleTarget = true
    var markdownPath: String?

    static let usage = """
        usage: flowmeter-bench ingest [--ack delivered,enqueue] [--connections 32,128] [--encodings plain,gzip]
                                      [--batches distinct,repeated] [--rounds 3] [--seconds 8] [--settle 1]
                                      [--max-requests N] [--flowmeter PATH] [--peer DIR] [--skip-peer] [--cpu N|none]
                                      [--skip-spool (serve --spool none, no spooling row)] [--markdown PATH]
                                      [--no-pause (the collector not under load keeps running)]
        Each collector runs pinned to --cpu; every cell of the matrix is measured --rounds times for --seconds each,
        the targets taking turns in every round; the summary reports medians and Flowmeter ÷ peer ratios.
        The Markdown summary goes to --markdown (default .build/bench/ingest-<commit>.md).
        """

    /// Parses `arguments`; a message for the user when they do not parse or leave a dimension empty.
    static func parse(_ arguments: [String]) -> Result<IngestOptions, BenchmarkError> {
        var options = IngestOptions()
        var index = 0
        func list(_ value: String, allowed: Set<String>, flag: String) throws(BenchmarkError) -> [String] {
            let items = value.split(separator: ",").map { $0 == "delivery" ? "delivered" : String($0) }
            guard !items.isEmpty, items.allSatisfy(allowed.contains) else {
                throw BenchmarkError(
                    "\(flag) takes a comma-separated list of \(allowed.sorted().joined(separator: ", "))")
            }
            return items
        }
        func number(_ value: String, flag: String, in range: ClosedRange<Double>) throws(BenchmarkError) -> Double {
            guard let number = Double(value), range.contains(number) else {
                throw BenchmarkError("\(flag) takes a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        do throws(BenchmarkError) {
            while index < arguments.count {
                let flag = arguments[index]
                let value = index + 1 < arguments.count ? arguments[index + 1] : ""
                index += 2
                switch flag {
                case "--ack": options.acks = try list(value, allowed: ["delivered", "enqueue"], flag: flag)
                case "--connections":
                    let counts = value.split(separator: ",").compactMap { Int($0) }
                    guard !counts.isEmpty, counts.allSatisfy({ (1...4096).contains($0) }) else {
                        throw BenchmarkError("--connections takes a comma-separated list of counts from 1 to 4096")
                    }
                    options.connections = counts
                case "--encodings": options.encodings = try list(value, allowed: ["plain", "gzip"], flag: flag)
                case "--batches": options.batches = try list(value, allowed: ["distinct", "repeated"], flag: flag)
                case "--rounds": options.rounds = Int(try number(value, flag: flag, in: 1...20))
                case "--seconds": options.seconds = try number(value, flag: flag, in: 0.5...120)
                case "--settle": options.settleSeconds = try number(value, flag: flag, in: 0...10)
                case "--max-requests": options.maxRequests = Int(try number(value, flag: flag, in: 1...50_000_000))
                case "--flowmeter": options.flowmeterPath = value
                case "--peer": options.peerDirectory = value
                case "--skip-peer":
                    options.skipsPeer = true
                    index -= 1
                case "--skip-spool":
                    options.measuresSpool = false
                    index -= 1
                case "--no-pause":
                    options.pausesIdleTarget = false
                    index -= 1
                case "--cpu": options.cpu = value == "none" ? nil : Int(try number(value, flag: flag, in: 0...1023))
                case "--markdown": options.markdownPath = value
                default: throw BenchmarkError("unknown option \(flag)")
                }
            }
        } catch {
            return .failure(error)
        }
        return .success(options)
    }
}
