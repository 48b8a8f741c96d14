package import Foundation

#if FUZZING
    import CLibFuzzer
#endif

/// The `main` of every `Fuzz*` executable.
///
/// Built for fuzzing (`make fuzz`: `-sanitize=fuzzer,address -DFUZZING`), it hands the command line to libFuzzer,
/// which mutates inputs and calls the target; an invariant failure prints the ``FuzzFailure`` and aborts, so libFuzzer
/// saves the input. Built normally, it replays the files and folders named on the command line through the same
/// check without sanitizers and exits 1 when any fails: the way to reproduce a crash artifact in a debugger.
package enum FuzzMain {
    /// The target libFuzzer's callback runs; set once, before the driver starts.
    nonisolated(unsafe) static var selected: (any FuzzTarget.Type)?

    /// Runs `target` under libFuzzer or over the named files; never returns.
    package static func run(_ target: any FuzzTarget.Type) -> Never {
        selected = target
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
            exit(replay(target, paths: Array(CommandLine.arguments.dropFirst())))
        #endif
    }

    /// Checks every file in `paths` (folders: every file inside, sorted), printing each failure; 0 when all pass.
    package static func replay(_ target: any FuzzTarget.Type, paths: [String]) -> Int32 {
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: \(target.name) FILE_OR_FOLDER...\n".utf8))
            return 2
        }
        var failures = 0
        var count = 0
        for url in paths.flatMap({ corpusFiles(at: URL(fileURLWithPath: $0)) }) {
            count += 1
            guard let data = FileManager.default.contents(atPath: url.path) else {
                print("\(url.path): unreadable")
                failures += 1
                continue
            }
            if let failure = FuzzTargets.failure(of: target, on: [UInt8](data)) {
                print("\(url.path): \(failure.message)")
                failures += 1
            }
        }
        print("\(target.name): \(count) inputs, \(failures) failed")
        return failures == 0 ? 0 : 1
    }

    /// The file at `url`, or every regular file below the folder at `url`, sorted by path.
    package static func corpusFiles(at url: URL) -> [URL] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { return [url] }
        guard isFolder.boolValue else { return [url] }
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: url.path)) ?? []
        return names.sorted().map { url.appendingPathComponent($0) }.filter { file in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder) && !isFolder.boolValue
        }
    }
}

#if FUZZING
    /// libFuzzer's callback: checks one input with the selected target; a failure aborts, which libFuzzer reports as a
    /// crash and saves.
    ///
    /// Also exported under libFuzzer's conventional name, which its own `main` (linked in, but not the one that runs)
    /// refers to.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        guard let target = FuzzMain.selected else { fatalError("no fuzz target selected") }
        let input = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: size)) } ?? []
        if let failure = FuzzTargets.failure(of: target, on: input) {
            FileHandle.standardError.write(Data("\n==== \(target.name): invariant failed: \(failure.message)\n".utf8))
            abort()
        }
        return 0
    }
#endif
