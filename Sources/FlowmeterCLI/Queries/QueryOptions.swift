import FlowmeterModels
import Foundation
import Lifecycle
import RollupStore

/// The options every query command shares (`--format`, `--since`, `--from`, `--to`, `--app`, `--store`, `--owners`,
/// `--team`) and how they are read.
enum QueryOptions {
    /// The shared options, with `since` as the default look-back.
    static func common(since: String = "24h") -> [CommandOption] {
        [
            OutputFormat.option,
            .value("since", "DURATION", help: "The window: the last DURATION (90m, 24h, 7d).", default: since),
            .value("from", "TIME", help: "Window start (RFC 3339); instead of --since."),
            .value("to", "TIME", help: "Window end (RFC 3339 or now).", default: "now"),
            .value("app", "APPID", help: "Only this app, e.g. com.example.shop."),
            SharedOptions.store,
            OwnerOptions.owners,
            OwnerOptions.team,
        ]
    }

    /// The window the options name: `--from`..`--to`, or the `--since` before `--to` (default now).
    ///
    /// `--since` and `--from` together, an unparseable value, or a window that ends before it starts are usage
    /// errors.
    /// `--deploy-window`: how long before a type's first events a deploy may have finished to be its suspect.
    static func deployWindow(_ arguments: ParsedArguments) throws(CommandUsageError) -> Duration {
        let seconds =
            try arguments.parsed("deploy-window", as: "a duration such as 30m or 2h") { OptionValues.wholeSeconds($0) }
            ?? 3600
        return .seconds(seconds)
    }

    static func window(_ arguments: ParsedArguments, now: Date = Date()) throws(CommandUsageError) -> QueryWindow {
        let path = arguments.commandPath
        let time = "an RFC 3339 time such as 2026-11-30T08:44:10Z"
        // "now" is taken to the whole second, so windows print as docs/api.md#query-output shows them (`…T10:00:00Z`).
        let wholeNow = Timestamp(secondsSinceEpoch: Int64(now.timeIntervalSince1970.rounded(.down)))
        let to =
            try arguments.parsed("to", as: time + ", or now") { text in
                text == "now" ? wholeNow : Timestamp(rfc3339: text)
            } ?? wholeNow
        let from: Timestamp
        if let given = try arguments.parsed("from", as: time, { Timestamp(rfc3339: $0) }) {
            if arguments.isSet("since") {
                throw CommandUsageError("--since and --from cannot be used together", commandPath: path)
            }
            from = given
        } else {
            let since =
                try arguments.parsed("since", as: "a positive duration such as 90m, 24h or 7d") {
                    OptionValues.wholeSeconds($0)
                } ?? 86_400
            from = Timestamp(secondsSinceEpoch: to.secondsSinceEpoch - since, nanoseconds: to.nanoseconds)
        }
        guard from < to else {
            throw CommandUsageError(
                "the window is empty: --from \(from.rfc3339String) is not before --to \(to.rfc3339String)",
                commandPath: path)
        }
        return QueryWindow(from: from, to: to)
    }

    /// The `--app` filter; nil when not given or empty.
    static func appID(_ arguments: ParsedArguments) -> String? {
        arguments.value("app").flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Opens the store for reading. An SQLite file that does not exist is a ``CommandError`` naming the path and how
    /// to create it, rather than a new empty store that answers every query with nothing.
    static func openStore(_ arguments: ParsedArguments) throws -> any RollupStore {
        let url = try arguments.required("store")
        if !url.hasPrefix("postgres://") && !url.hasPrefix("postgresql://") {
            var path = url
            for prefix in ["sqlite://", "sqlite:"] where path.hasPrefix(prefix) {
                path.removeFirst(prefix.count)
                break
            }
            if !path.isEmpty && !path.contains("://") && path != ":memory:"
                && !FileManager.default.fileExists(atPath: path)
            {
                throw CommandError(
                    .storeMissing,
                    """
                    no rollup store at '\(path)'. Create it with 'flowmeter serve --store \(path) …' (or 'flowmeter \
                    sink --store \(path) …'), or point --store / FLOWMETER_STORE at an existing store.
                    """)
            }
        }
        return try SharedOptions.openStore(arguments)
    }

    /// Runs a blocking read of the store off the cooperative pool.
    static func read<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await onThread(named: "flowmeter-blocking") { Result { try work() } }.get()
    }
}
