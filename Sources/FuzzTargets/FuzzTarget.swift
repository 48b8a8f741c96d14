/// One fuzz target: a name (its corpus folder under `Tests/Fuzz/`) and a check of one input.
///
/// `check` must not crash on any input and throws ``FuzzFailure`` when one of the target's invariants does not
/// hold. The same function runs under libFuzzer (`make fuzz`, the `Fuzz*` executables built with
/// `-sanitize=fuzzer,address`) and in the ordinary test suite over the checked-in corpus.
package protocol FuzzTarget: Sendable {
    /// The corpus folder name under `Tests/Fuzz/`, such as `batch-decoder`.
    static var name: String { get }
    /// Checks one input.
    static func check(_ input: [UInt8]) throws(FuzzFailure)
}

/// Every fuzz target, in the order `make fuzz` runs them.
package enum FuzzTargets {
    /// The targets.
    package static let all: [any FuzzTarget.Type] = [
        BatchDecoderFuzzTarget.self, InflateFuzzTarget.self, DeployMarkerFuzzTarget.self, BlobCodecFuzzTarget.self,
        IngestRequestFuzzTarget.self, PageWalkerFuzzTarget.self, BatchRecordFuzzTarget.self,
    ]

    /// The targets' names, which are their corpus folders.
    package static var names: [String] { all.map { $0.name } }

    /// The target named `name` (its corpus folder), or nil.
    package static func named(_ name: String) -> (any FuzzTarget.Type)? {
        all.first { $0.name == name }
    }

    /// What `target` found wrong with `input`, or nil when every invariant held.
    package static func failure(of target: any FuzzTarget.Type, on input: [UInt8]) -> FuzzFailure? {
        do throws(FuzzFailure) {
            try target.check(input)
            return nil
        } catch {
            return error
        }
    }
}
