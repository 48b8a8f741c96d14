// flowmeter-bench: one subcommand per benchmark; each parses its own options.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let subcommands: [String: ([String]) -> Int32] = [
    "decode": DecodeBenchmark.run,
    "compatibility": CompatibilityBenchmark.run,
    "detector": DetectorBenchmark.run,
    "ingest": IngestBenchmark.run,
    "instructions": InstructionsBenchmark.run,
    "rollups": RollupsBenchmark.run,
    "sink": SinkBenchmark.run,
    "store": StoreBenchmark.run,
    "reporter": ReporterBenchmark.run,
    "reporter-probe": ReporterProbe.run,
    "reporter-split-probe": ReporterSplitProbe.run,
]
guard let name = arguments.first, let command = subcommands[name] else {
    print("usage: flowmeter-bench <\(subcommands.keys.sorted().joined(separator: "|"))> [options]")
    exit(2)
}
exit(command(Array(arguments.dropFirst())))
