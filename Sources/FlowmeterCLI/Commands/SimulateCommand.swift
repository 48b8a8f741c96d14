import Foundation

/// `flowmeter simulate`: realistic, seeded traffic against a running collector, with deploys that plant an ungated
/// type, a typo and a malformed payload, and the ground truth of what should be found.
enum SimulateCommand {
    static var command: Command {
        Command(
            name: "simulate",
            abstract: "Send realistic, seeded app traffic and backend deploys to a running collector.",
            discussion: """
                Three apps (com.example.shop, com.example.reader, com.example.travel), thousands of installs with
                stable install ids, a new version ramping up, a few percent of debug builds, and page-api deploys
                that ship an ungated type (hologram_projector, rendered from shop 5.3.0), a typo (imgae_text_card)
                and a payload missing 'imageURL' on image_text_card, over steady background noise.
                --simulated-hours of traffic before now are compressed into --duration of wall time: batches carry
                sentAt = now and events the simulated occurredAt; deploy markers (POST /v1/deploys, needs
                --admin-key) carry simulated times. The --key must be allowed to write the three apps.
                Everything but batch and event ids is fixed by --seed. Exit 0 when the collector took batches,
                1 when it took none (wrong key, nothing listening), 2 on a usage error.
                Example: flowmeter simulate --target http://127.0.0.1:8080 --key K --admin-key A --truth truth.json
                """,
            options: [
                .value(
                    "target", "URL[,URL…]", help: "The collector's base URL; several are load-balanced.",
                    default: "http://127.0.0.1:8080"),
                .value("key", "KEY", help: "Ingest key allowed to write the simulated apps."),
                .secret(
                    "admin-key", "KEY", help: "Admin key for POST /v1/deploys (FLOWMETER_ADMIN_KEY); none: no deploys."),
                .value("seed", "N", help: "Seed of the traffic.", default: "2026"),
                .value("duration", "DURATION", help: "Wall time to spread the traffic over.", default: "60s"),
                .value("simulated-hours", "HOURS", help: "Simulated hours before now (at most 48).", default: "4"),
                .value("max-requests", "N", help: "Batches to send.", default: "12000"),
                .value("concurrency", "N", help: "Batches in flight at once.", default: "8"),
                .value("truth", "FILE", help: "Write the ground truth (planted findings, deploys, counts) as JSON."),
                .value("manifests", "DIR", help: "Write the fleet's capability manifests there (one per version)."),
                .flag("quiet", help: "No progress bar or summary; only errors."),
            ],
            run: { arguments in try await run(arguments) }
        )
    }

    private static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let path = arguments.commandPath
        guard
            let targets = try arguments.parsed(
                "target", as: "an http:// URL, or several separated by commas",
                { text -> [URL]? in
                    let urls = text.split(separator: ",").map {
                        URL(string: $0.trimmingCharacters(in: .whitespaces)).flatMap {
                            $0.scheme == "http" || $0.scheme == "https" ? $0 : nil
                        }
                    }
                    return urls.isEmpty || urls.contains(nil) ? nil : urls.compactMap { $0 }
                }), let target = targets.first
        else {
            throw CommandUsageError("missing required option --target", commandPath: path)
        }
        let key = try arguments.required("key")
        let adminKey = arguments.value("admin-key").flatMap { $0.isEmpty ? nil : $0 }
        let seed = try arguments.parsed("seed", as: "a non-negative integer") { UInt64($0) } ?? 2026
        let duration =
            try arguments.parsed("duration", as: "a positive duration such as 60s") {
                OptionValues.duration($0).flatMap { $0 > .zero ? $0 : nil }
            } ?? .seconds(60)
        let hours =
            try arguments.parsed("simulated-hours", as: "a number of hours in (0, 48]") {
                Double($0).flatMap { $0 > 0 && $0 <= 48 ? $0 : nil }
            } ?? 4
        let requests =
            try arguments.parsed("max-requests", as: "a positive integer") {
                Int($0).flatMap { $0 > 0 ? $0 : nil }
            } ?? 12_000
        let concurrency =
            try arguments.parsed("concurrency", as: "an integer from 1 to 256") {
                Int($0).flatMap { (1...256).contains($0) ? $0 : nil }
            } ?? 8
        let quiet = arguments.flag("quiet")
        if let directory = arguments.value("manifests"), !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for manifest in SimulatedManifests.all() {
                try Data(manifest.jsonBytes()).write(
                    to: URL(fileURLWithPath: directory).appendingPathComponent(SimulatedManifests.fileName(manifest)))
            }
        }

        var run = SimulationRun(
            target: target, ingestKey: key, adminKey: adminKey, seed: seed, duration: duration,
            simulatedHours: hours, maxRequests: requests, concurrency: concurrency, showsProgress: !quiet
        )
        run.moreTargets = Array(targets.dropFirst())
        let outcome = await run.run()
        if let file = arguments.value("truth"), !file.isEmpty {
            try outcome.truth.jsonData().write(to: URL(fileURLWithPath: file))
        }
        let counters = outcome.counters
        if !quiet {
            outcome.printSummary()
        }
        if counters.accepted == 0 {
            FileHandle.standardError.write(
                Data("error: the collector took no batch (\(counters.firstError ?? "nothing sent"))\n".utf8))
            return 1
        }
        return 0
    }
}
