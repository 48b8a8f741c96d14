import Detector
import FlowmeterModels
import Foundation
import Kafka
import RollupStore
import Rollups

/// `flowmeter manifests upload|list|check`: capability manifests (docs/api.md#capability-manifests, docs/manifests.md)
/// uploaded from a build pipeline, listed, and checked against what the traffic of each version says.
enum ManifestsCommand {
    static var command: Command {
        Command(
            name: "manifests",
            abstract: "Upload, list and check capability manifests: what each app build can render.",
            subcommands: [upload, list, check, ManifestsDiffCommand.command]
        )
    }

    private static var upload: Command {
        Command(
            name: "upload",
            abstract: "Upload one build's manifest (to a collector with --collector, else to the store).",
            discussion: """
                The file is validated first (required fields, identifiers, key paths, size limits); an invalid one
                is never sent. With --collector it goes to POST /v1/manifests with the admin key (--admin-key or
                FLOWMETER_ADMIN_KEY), which stores it and publishes it to every sink: what a build pipeline runs.
                Without, it is recorded in --store (and published with --kafka). The same app id, version,
                platform and build uploaded again replaces the earlier manifest. FILE may be - for standard input.
                Exit status: 0 recorded, 1 refused or failed, 2 usage error.
                """,
            positionalUsage: "FILE",
            options: [
                .value("collector", "URL", help: "Post to this collector's /v1/manifests."),
                .secret("admin-key", "KEY", help: "Admin key for --collector; set FLOWMETER_ADMIN_KEY."),
                SharedOptions.store,
                .flag("no-store", help: "Record in Kafka only (needs --kafka)."),
                .value("kafka", "HOST:PORT[,…]", help: "Also publish to the manifests topic."),
                .value(
                    "manifests-topic", "NAME", help: "Topic of capability manifests.",
                    default: OptionDefaults.collector.topics.manifests
                ),
            ] + SharedOptions.kafkaClient,
            run: { arguments in try await runUpload(arguments) }
        )
    }

    private static var list: Command {
        Command(
            name: "list",
            abstract: "List stored manifests: one line per app, version, platform and build.",
            options: [
                .value("app", "APPID", help: "Only this app."),
                SharedOptions.store,
                .value("format", "FORMAT", help: "table | json.", default: "table"),
            ],
            run: { arguments in try runList(arguments) }
        )
    }

    private static var check: Command {
        Command(
            name: "check",
            abstract: "Find manifests the traffic contradicts (out of date).",
            discussion: """
                Over release builds in the window: a version that reports unknownType for a type its manifest
                lists, or malformedPayload for a missing key its manifest calls optional (or does not list), has
                a manifest out of date: the build registers, or requires, something else than it says. Judged per
                platform. Exit status: 0 every manifest agrees, 3 some are out of date, 1 error, 2 usage error.
                """,
            options: QueryOptions.common(since: "7d"),
            run: { arguments in try await runCheck(arguments) }
        )
    }

    private static func runUpload(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        guard let file = arguments.positionals.first else {
            throw CommandUsageError("missing FILE (a manifest, or - for standard input)", commandPath: path)
        }
        guard arguments.positionals.count == 1 else {
            throw CommandUsageError("expected one manifest, got \(arguments.positionals.count)", commandPath: path)
        }
        let bytes: [UInt8]
        if file == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw CommandError(.unreadableInput, "cannot read manifest '\(file)'")
            }
            bytes = Array(contents)
        }
        var manifest: CapabilityManifest
        do {
            manifest = try CapabilityManifest(jsonBytes: bytes)
        } catch {
            throw CommandError(.unreadableInput, "manifest '\(file)' is refused: \(error)")
        }
        let output = arguments.output
        if let collector = arguments.value("collector"), !collector.isEmpty {
            guard let url = URL(string: collector), url.scheme == "http" || url.scheme == "https" else {
                throw CommandUsageError(
                    "invalid value '\(collector)' for --collector: expected an http(s) URL", commandPath: path)
            }
            guard let key = arguments.value("admin-key"), !key.isEmpty else {
                throw CommandUsageError("--collector needs --admin-key (or FLOWMETER_ADMIN_KEY)", commandPath: path)
            }
            let answer: ManifestUpload.Answer
            do {
                answer = try await ManifestUpload(collector: url, adminKey: key).send(bytes)
            } catch {
                throw CommandError(.unavailable, "no answer from \(collector): \(error.localizedDescription)")
            }
            guard answer.status == 201 else {
                let at = answer.path.map { $0.isEmpty ? "" : " (at \($0))" } ?? ""
                throw CommandError(
                    .refused,
                    "the collector refused the manifest: HTTP \(answer.status) \(answer.error ?? ""): "
                        + "\(answer.message)\(at)")
            }
            output.print("uploaded " + summary(manifest))
            return 0
        }
        let toStore = !arguments.flag("no-store")
        let toKafka = arguments.value("kafka").map { !$0.isEmpty } ?? false
        guard toStore || toKafka else {
            throw CommandUsageError("--no-store needs --kafka", commandPath: path)
        }
        manifest.uploadedAt = Timestamp(Date())
        if toStore {
            try SharedOptions.openStore(arguments).recordManifest(manifest)
        }
        if toKafka {
            var configuration = KafkaProducerConfiguration(bootstrapServers: try SharedOptions.brokers(arguments))
            configuration.clientID = "flowmeter-manifests"
            configuration.messageTimeout = .seconds(30)
            configuration.statisticsInterval = .zero
            configuration.additionalProperties = try SharedOptions.kafkaClientOptions(arguments).properties
            let producer = try KafkaProducer(configuration: configuration)
            let topic = try arguments.required("manifests-topic")
            _ = try await producer.send(
                KafkaProducerMessage(
                    topic: topic, key: Array(manifest.appID.utf8), value: manifest.jsonBytes(),
                    headers: KafkaHeader.json(schema: topic)))
            _ = await producer.shutdown(timeout: .seconds(5))
        }
        output.print("recorded " + summary(manifest))
        return 0
    }

    /// `com.example.shop 5.3.0 ios build 5300: 12 types, 3 arrangements`, escaped for a terminal.
    static func summary(_ manifest: CapabilityManifest) -> String {
        let build = manifest.build.map { " build " + Terminal.name($0) } ?? ""
        let arrangements = manifest.arrangements.map { ", \($0.count) arrangements" } ?? ""
        return "\(Terminal.name(manifest.appID)) \(Terminal.name(manifest.appVersion)) "
            + "\(Terminal.name(manifest.platform))\(build): \(manifest.types.count) types\(arrangements)"
    }

    private static func runList(_ arguments: ParsedArguments) throws -> Int32 {
        let path = arguments.commandPath
        let format = try arguments.required("format")
        guard format == "table" || format == "json" else {
            throw CommandUsageError("invalid value '\(format)' for --format: expected table or json", commandPath: path)
        }
        let appID = arguments.value("app").flatMap { $0.isEmpty ? nil : $0 }
        let manifests = try SharedOptions.openStore(arguments).manifests(appID: appID).filter {
            arguments.mayRead($0.appID)
        }
        if format == "json" {
            var text = #"{"manifests":["#
            text += manifests.map { String(decoding: $0.jsonBytes(), as: UTF8.self) }.joined(separator: ",")
            text += "]}"
            arguments.output.print(text)
            return 0
        }
        guard !manifests.isEmpty else {
            arguments.output.print(appID.map { "No manifests for \(Terminal.name($0))." } ?? "No manifests.")
            return 0
        }
        // Manifests come from anyone holding an admin key: TextTable shows them escaped.
        var table = TextTable(columns: [
            .text("APP", flexible: true), .text("VERSION"), .text("PLATFORM"), .text("BUILD"), .number("TYPES"),
            .number("KEYS"), .text("ARRANGEMENTS", flexible: true), .text("UPLOADED"),
        ])
        for manifest in manifests {
            let keys = manifest.types.values.reduce(0) { $0 + $1.required.count + $1.optional.count }
            table.append([
                manifest.appID, manifest.appVersion, manifest.platform, manifest.build ?? "-",
                String(manifest.types.count), String(keys),
                manifest.arrangements.map { $0.joined(separator: ", ") } ?? "-",
                manifest.uploadedAt.map(CellFormat.time) ?? "-",
            ])
        }
        let app = table.removeColumnIfUniform("APP").map { " of " + Terminal.name($0) } ?? ""
        let noun = manifests.count == 1 ? "manifest" : "manifests"
        arguments.output.print(table.rendered() + "\n\n\(manifests.count) \(noun)\(app).")
        return 0
    }

    private static func runCheck(_ arguments: ParsedArguments) async throws -> Int32 {
        let format = try OutputFormat.parse(arguments)
        let window = try QueryOptions.window(arguments)
        let appID = QueryOptions.appID(arguments)
        let store = try QueryOptions.openStore(arguments)
        var report = try await QueryOptions.read {
            try ManifestDriftFinder().report(reader: store, from: window.from, to: window.to, appID: appID)
        }
        report.drift.removeAll { !arguments.mayRead($0.appID) }
        format.print(
            to: arguments.output, json: { report.jsonString(prettyPrinted: true) }, csv: { csv(report) },
            table: { table(report, style: $0) })
        return report.exitStatus
    }

    /// Why a finding is drift, in words.
    static func reason(_ drift: ManifestDrift) -> String {
        switch drift.reason {
        case .listedTypeUnknown: "listed, yet reported unknown"
        case .optionalKeyRequired: "\(Terminal.name(drift.key ?? "")) is optional, yet its absence breaks it"
        case .unlistedKeyRequired: "\(Terminal.name(drift.key ?? "")) is not listed, yet its absence breaks it"
        }
    }

    static func table(_ report: ManifestDriftReport, style: @escaping (String) -> String) -> String {
        let window = "\(CellFormat.time(report.from)) – \(CellFormat.time(report.to)) UTC"
        guard !report.drift.isEmpty else {
            let text =
                report.manifestCount == 0
                ? "No manifests to check (\(window))."
                : "Every manifest agrees with its version's traffic: \(report.manifestCount) checked (\(window))."
            return Terminal.wrapped(text, indent: "").joined(separator: "\n")
        }
        var table = TextTable(columns: [
            .text("APP", flexible: true, shrinkPriority: 1), .text("VERSION"), .text("PLATFORM"),
            .text("TYPE", flexible: true, shrinkPriority: -1), .text("DRIFT", flexible: true), .number("EVENTS"),
        ])
        for drift in report.drift {
            table.append([
                drift.appID, drift.appVersion, drift.platform, drift.widgetType, reason(drift),
                CellFormat.count(drift.events),
            ])
        }
        let app = table.removeColumnIfUniform("APP").map { " of " + Terminal.name($0) } ?? ""
        var lines = [table.rendered(style: style), ""]
        lines += Terminal.wrapped(
            "\(report.drift.count) out of date\(app) (\(window)): upload the build's manifest again, generated from "
                + "the types it registers (docs/manifests.md).", indent: "")
        return lines.joined(separator: "\n")
    }

    static func csv(_ report: ManifestDriftReport) -> CSVTable {
        var csv = CSVTable(header: [
            "appID", "appVersion", "platform", "widgetType", "kind", "key", "reason", "events", "builds", "lastSeen",
        ])
        for drift in report.drift {
            csv.rows.append([
                drift.appID, drift.appVersion, drift.platform, drift.widgetType, drift.kind.rawValue, drift.key ?? "",
                drift.reason.rawValue, String(drift.events), drift.builds.joined(separator: " "),
                drift.lastSeen.rfc3339String,
            ])
        }
        return csv
    }
}
