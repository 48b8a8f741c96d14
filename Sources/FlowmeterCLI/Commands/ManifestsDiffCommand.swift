import Detector
import FlowmeterModels
import Foundation
import Rollups

/// `flowmeter manifests diff --app A --platform P --from BUILD --to BUILD`: can the new build ship? The types it drops
/// that backends still send, and the keys it newly requires that payloads lack, weighted by the installs that will
/// move to it.
enum ManifestsDiffCommand {
    static var command: Command {
        Command(
            name: "diff",
            abstract: "Can a new build ship: types it drops that backends send, keys it newly requires.",
            discussion: """
                Compares two uploaded manifests of one app and platform, by build (--from the build in use, --to
                the new one). A type the new build drops breaks where backends still send it: the traffic of the
                last --since shows which types backends send (any diagnostic of the type carries the releases that
                sent it), and the --fixtures payloads (files or directories of page payloads, as for check) show
                what the backend's own fixtures send. A key the new build newly requires breaks every widget that
                lacks it: the fixtures are checked for it (traffic carries no payloads, so only fixtures can show a
                key missing). Each break is weighted by the installs that will move to the new build: the
                installs of the --from build's version in the window, and their share of the app's.

                Exit status: 0 nothing would break, 3 something would, 1 error (a build without a manifest), 2
                usage error.
                """,
            options: [
                .value("app", "APPID", help: "The app."),
                .value("platform", "PLATFORM", help: "The platform (ios, android, …)."),
                .value("from", "BUILD", help: "The build in use (its uploaded manifest)."),
                .value("to", "BUILD", help: "The new build (its uploaded manifest)."),
                .value("since", "DURATION", help: "The traffic window, ending now.", default: "7d"),
                .value(
                    "fixtures", "PATH", help: "Page payload files or directories to check keys in.", repeatable: true),
                SharedOptions.store,
                .value("format", "FORMAT", help: "table | json.", default: "table"),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    /// A type the new build drops that something still sends.
    struct DroppedType: Sendable, Hashable {
        var widgetType: String
        /// Backend releases whose events of it (any kind, any version) were seen in the window, most events first.
        var releases: [String]
        /// Events of it in the window.
        var events: Int64
        /// Fixture payloads that send it.
        var fixtures: [String]
    }

    /// A key the new build requires that the old did not, with the fixture widgets that lack it.
    struct NewlyRequiredKey: Sendable, Hashable {
        var widgetType: String
        var key: String
        /// `payload: coding path` of each object that lacks it.
        var lackedAt: [String]
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        let appID = try required(arguments, "app")
        let platform = try required(arguments, "platform")
        let fromBuild = try required(arguments, "from")
        let toBuild = try required(arguments, "to")
        let json =
            try arguments.parsed("format", as: "table or json") { ["table", "json"].contains($0) ? $0 : nil }
            == "json"
        let since =
            try arguments.parsed("since", as: "a positive duration such as 24h or 7d") {
                OptionValues.wholeSeconds($0)
            } ?? 7 * 86_400
        let now = Timestamp(secondsSinceEpoch: Int64(Date().timeIntervalSince1970))
        let windowStart = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - since)
        let payloads = try CheckPayload.gather(arguments.values("fixtures")) { Data() }
        var pages: [(CheckPayload, PageWalker.Page)] = []
        for payload in payloads {
            guard let page = try? PageWalker.page(in: Data(payload.bytes)) else {
                throw CommandError(.unreadableInput, "fixture '\(payload.name)' is not a page payload")
            }
            pages.append((payload, page))
        }
        let store = try QueryOptions.openStore(arguments)
        let (manifests, series, versions) = try await QueryOptions.read {
            (
                try store.manifests(appID: appID),
                try store.seriesRollups(SeriesQuery(from: windowStart, to: now, appID: appID)),
                try store.versionRollups(from: windowStart, to: now, appID: appID)
            )
        }
        let ofPlatform = manifests.filter { $0.platform == platform }
        guard let old = ofPlatform.first(where: { $0.build == fromBuild }) else {
            throw CommandError(.unreadableInput, "no manifest of \(appID) \(platform) build \(fromBuild) is stored")
        }
        guard let new = ofPlatform.first(where: { $0.build == toBuild }) else {
            throw CommandError(.unreadableInput, "no manifest of \(appID) \(platform) build \(toBuild) is stored")
        }
        _ = path

        // Dropped types, and who still sends them.
        var dropped: [DroppedType] = []
        for type in old.types.keys.sorted() where new.types[type] == nil {
            var releases: [String: Int64] = [:]
            var events: Int64 = 0
            for rollup in series where rollup.series.widgetType == type && rollup.series.platform == platform {
                events += rollup.events
                releases.merge(rollup.releases, uniquingKeysWith: +)
            }
            let fixtures = pages.filter { $0.1.occurrences.contains { $0.widget.type == type } }.map(\.0.name)
            if events > 0 || !fixtures.isEmpty {
                dropped.append(
                    DroppedType(
                        widgetType: type,
                        releases: releases.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                            .map(\.key), events: events, fixtures: fixtures))
            }
        }
        // Newly required keys the fixtures lack.
        var keys: [NewlyRequiredKey] = []
        for (type, shape) in new.types.sorted(by: { $0.key < $1.key }) {
            let before = Set(old.types[type]?.required ?? [])
            for key in shape.required where !before.contains(key) {
                var lacked: [String] = []
                for (payload, page) in pages {
                    for occurrence in page.occurrences where occurrence.widget.type == type {
                        for gap in ShapeCheck.missing([key], in: occurrence.content, at: occurrence.contentPath) {
                            lacked.append("\(payload.name): \(gap.path)")
                        }
                    }
                }
                keys.append(NewlyRequiredKey(widgetType: type, key: key, lackedAt: lacked))
            }
        }
        // The installs that will move: the old build's version.
        var moving = HyperLogLog()
        var all = HyperLogLog()
        for rollup in versions where rollup.key.platform == platform && rollup.key.buildConfiguration == .release {
            all.merge(rollup.installs)
            if rollup.key.appVersion == old.appVersion { moving.merge(rollup.installs) }
        }
        let movingShare =
            all.count > 0 ? (Double(min(moving.count, all.count)) / Double(all.count) * 10_000).rounded() / 10_000 : 0
        let breaking = !dropped.isEmpty || keys.contains { !$0.lackedAt.isEmpty }
        let output = arguments.output
        if json {
            let value: JSONValue = .object([
                ("appID", .string(appID)), ("platform", .string(platform)),
                ("from", .object([("build", .string(fromBuild)), ("appVersion", .string(old.appVersion))])),
                ("to", .object([("build", .string(toBuild)), ("appVersion", .string(new.appVersion))])),
                ("since", .string(windowStart.rfc3339String)),
                ("movingInstalls", .integer(moving.count)), ("movingShare", .number(movingShare)),
                ("breaks", .bool(breaking)),
                (
                    "droppedTypes",
                    .array(
                        dropped.map { type in
                            .object([
                                ("widgetType", .string(type.widgetType)),
                                ("releases", .array(type.releases.map { .string($0) })),
                                ("events", .integer(type.events)),
                                ("fixtures", .array(type.fixtures.map { .string($0) })),
                            ])
                        })
                ),
                (
                    "newlyRequiredKeys",
                    .array(
                        keys.map { key in
                            .object([
                                ("widgetType", .string(key.widgetType)), ("key", .string(key.key)),
                                ("lackedAt", .array(key.lackedAt.map { .string($0) })),
                                ("breaks", .bool(!key.lackedAt.isEmpty)),
                            ])
                        })
                ),
            ])
            output.print(value.serialized(prettyPrinted: true))
        } else {
            var lines = [
                "\(Terminal.name(appID)) \(Terminal.name(platform)): build \(Terminal.name(fromBuild)) "
                    + "(\(Terminal.name(old.appVersion))) → \(Terminal.name(toBuild)) (\(Terminal.name(new.appVersion))); "
                    + "\(moving.count) installs (\(CellFormat.percent(movingShare))) will move."
            ]
            for type in dropped {
                let senders =
                    type.releases.isEmpty ? "" : " by \(type.releases.map(Terminal.name).joined(separator: ", "))"
                let fixtures =
                    type.fixtures.isEmpty
                    ? "" : "; fixtures \(type.fixtures.map(Terminal.name).joined(separator: ", "))"
                lines += Terminal.wrapped(
                    "BREAKS: drops \(Terminal.name(type.widgetType)), still sent (\(type.events) events\(senders)\(fixtures)).",
                    indent: "  ")
            }
            for key in keys {
                if key.lackedAt.isEmpty {
                    lines += Terminal.wrapped(
                        "newly requires \(Terminal.name(key.widgetType)).\(Terminal.name(key.key)); no fixture lacks it.",
                        indent: "  ")
                } else {
                    lines += Terminal.wrapped(
                        "BREAKS: newly requires \(Terminal.name(key.widgetType)).\(Terminal.name(key.key)), lacked at "
                            + key.lackedAt.map(Terminal.name).joined(separator: ", ") + ".", indent: "  ")
                }
            }
            lines.append(
                breaking
                    ? "FAIL: build \(Terminal.name(toBuild)) would break what backends send."
                    : "OK: nothing would break.")
            output.print(lines.joined(separator: "\n"))
        }
        return breaking ? 3 : 0
    }

    private static func required(_ arguments: ParsedArguments, _ name: String) throws -> String {
        guard let value = arguments.value(name), !value.isEmpty else {
            throw CommandUsageError("missing --\(name)", commandPath: arguments.commandPath)
        }
        return value
    }
}
