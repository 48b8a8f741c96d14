import FuzzTargets

/// `DeployMarkerFuzzTarget` under libFuzzer when `make fuzz` builds it; built normally, a replayer of the files and
/// folders named on the command line (docs/fuzzing.md).
@main
enum FuzzDeployMarker {
    static func main() {
        FuzzMain.run(DeployMarkerFuzzTarget.self)
    }
}
