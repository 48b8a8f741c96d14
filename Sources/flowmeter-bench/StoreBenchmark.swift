import Foundation
import RollupStore
import RollupStoreBenchmarks
import TestSupport

/// `flowmeter-bench store`: fills a store with 30 days of minute rollups and times the detector's queries, for SQLite
/// and (with `--postgres`, a throwaway cluster on loopback) PostgreSQL side by side.
enum StoreBenchmark {
    static let usage =
        "usage: flowmeter-bench store [--days N] [--series N] [--repetitions N] [--postgres] [--store URL]"

    static func run(_ arguments: [String]) -> Int32 {
        var days = 30
        var series = 50
        var repetitions = 5
        var includesPostgres = false
        var explicitStore: String?
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--days": days = Int(value) ?? days
            case "--series": series = Int(value) ?? series
            case "--repetitions": repetitions = Int(value) ?? repetitions
            case "--store": explicitStore = value
            case "--postgres":
                includesPostgres = true
                index -= 1
            default:
                print(usage)
                return 2
            }
            index += 2
        }
        do {
            var targets: [(name: String, url: String)] = []
            let directory = try TemporaryDirectory()
            if let explicitStore {
                targets.append(("given", explicitStore))
            } else {
                targets.append(("sqlite", directory.file("bench.sqlite")))
            }
            var postgres: PostgresServer?
            if includesPostgres {
                let server = try PostgresServer()
                _ = try server.start()
                postgres = server
                targets.append(("postgres", try server.makeDatabase(prefix: "bench")))
            }
            defer { postgres?.stop() }
            print("filling \(days) days × \(series) series of minute rollups per store, \(repetitions) runs per query")
            for target in targets {
                let store = try openRollupStore(url: target.url)
                let report = try RollupStoreBenchmark.run(
                    store: store, days: days, seriesCount: series, repetitions: repetitions)
                print("\n== \(target.name)")
                print(report.description)
            }
            directory.remove()
            return 0
        } catch {
            print("error: \(error)")
            return 1
        }
    }
}
