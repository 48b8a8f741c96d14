import FuzzTargets

/// `InflateFuzzTarget` under libFuzzer when `make fuzz` builds it; built normally, a replayer of the files and
/// folders named on the command line (docs/fuzzing.md).
@main
enum FuzzInflate {
    static func main() {
        FuzzMain.run(InflateFuzzTarget.self)
    }
}
