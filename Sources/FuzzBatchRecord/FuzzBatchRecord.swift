import FuzzTargets

/// `BatchRecordFuzzTarget` under libFuzzer when `make fuzz` builds it; built normally, a replayer of the files and
/// folders named on the command line (docs/fuzzing.md).
@main
enum FuzzBatchRecord {
    static func main() {
        FuzzMain.run(BatchRecordFuzzTarget.self)
    }
}
