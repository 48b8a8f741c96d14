import FlowmeterModels
import FlowmeterWire
import Foundation

/// `flowmeter-bench decode [--seconds N] [--batches N] [--rounds N]`: events per second of the fast and the Codable
/// decode paths on the same realistic 50-event batches, on one thread.
///
/// With `--rounds`, it times nothing: it decodes the batches that many times as the collector does (one kept
/// 1,024-slot interner, each batch's arrays reused by the next) and prints the events decoded, a fixed workload for
/// counting instructions: `valgrind --tool=callgrind --toggle-collect='*FastBatchDecoder*decodeCompact*'`, whose
/// total divided by the events printed is the decoder's instructions per event.
enum DecodeBenchmark {
    static func run(_ arguments: [String]) -> Int32 {
        var seconds = 3.0
        var batchCount = 200
        var rounds: Int?
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--seconds": seconds = Double(value) ?? seconds
            case "--batches": batchCount = Int(value) ?? batchCount
            case "--rounds": rounds = Int(value).map { max(1, $0) }
            default:
                print("usage: flowmeter-bench decode [--seconds N] [--batches N] [--rounds N]")
                return 2
            }
            index += 2
        }
        let batches = SyntheticBatches.batches(count: batchCount, seed: 42)
        if let rounds { return decodeRounds(batches, rounds: rounds) }
        let datas = batches.map { Data($0) }
        let bytes = batches.reduce(0) { $0 + $1.count }
        print("batches: \(batchCount), average \(bytes / batchCount) bytes, 50 events each")

        // The two paths must agree before their speeds mean anything.
        for (raw, data) in zip(batches, datas) {
            guard let fast = try? FastBatchDecoder.decode(raw), let reference = try? CodableBatchDecoder.decode(data),
                fast == reference
            else {
                print("error: fast and Codable paths disagree on a synthetic batch")
                return 1
            }
        }

        let fast = measure(seconds: seconds) { round in
            var events = 0
            for raw in batches { events += (try? FastBatchDecoder.decode(raw))?.batch.events.count ?? 0 }
            return events
        }
        let codable = measure(seconds: seconds) { round in
            var events = 0
            for data in datas { events += (try? CodableBatchDecoder.decode(data))?.batch.events.count ?? 0 }
            return events
        }
        let decoderOnly = measure(seconds: seconds) { round in
            var events = 0
            for data in datas {
                events += (try? JSONDecoder().decode(DecodedBatch.self, from: data))?.batch.events.count ?? 0
            }
            return events
        }
        let megabytes = Double(bytes) / Double(batches.count * 50) / 1_000_000
        print(String(format: "fast path:                 %10.0f events/s  (%6.1f MB/s)", fast, fast * megabytes))
        print(String(format: "Codable path (validated):  %10.0f events/s  (%6.1f MB/s)", codable, codable * megabytes))
        print(
            String(
                format: "JSONDecoder alone:         %10.0f events/s  (%6.1f MB/s)", decoderOnly, decoderOnly * megabytes
            ))
        print(String(format: "ratio fast / Codable path: %10.1fx", fast / codable))
        print(String(format: "ratio fast / JSONDecoder:  %10.1fx", fast / decoderOnly))
        return 0
    }

    /// Decodes `batches` `rounds` times through the collector's entry point; prints the events decoded.
    static func decodeRounds(_ batches: [[UInt8]], rounds: Int) -> Int32 {
        var interner = StringInterner(slots: 1_024)
        var storage = EventTableStorage()
        var events = 0
        for _ in 0..<rounds {
            for raw in batches {
                guard
                    let decoded = try? FastBatchDecoder.decodeCompact(
                        raw, interner: &interner, storage: consume storage)
                else {
                    print("error: a synthetic batch failed to decode")
                    return 1
                }
                events += decoded.table.count + decoded.dropped.count
                storage = decoded.table.storage
            }
        }
        print("decoded \(events) events in \(rounds) rounds of \(batches.count) batches")
        return 0
    }

    /// Runs `round` until `seconds` have passed (at least once); returns events per second.
    static func measure(seconds: Double, _ round: (Int) -> Int) -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        var events = 0
        var rounds = 0
        repeat {
            events += round(rounds)
            rounds += 1
        } while clock.now < deadline
        let elapsed = clock.now - start
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(events) / elapsedSeconds
    }
}
