import Foundation
import TestSupport
import Testing

/// The shipped executable allocates with mimalloc (ProcessAllocator), not glibc's malloc.
@Suite struct AllocatorTests {
    /// `flowmeter --version` names the allocator that a block from `malloc` came from, so this fails when a change
    /// to the link order lets glibc's `malloc` win.
    @Test(
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"))
    func builtExecutableAllocatesWithMimalloc() async throws {
        let run = try await FlowmeterExecutable.run(["--version"])
        #expect(run.status == 0)
        #expect(run.output.split(separator: "\n").contains { $0.hasPrefix("allocator: mimalloc 2.") }, "\(run.output)")
    }

    /// With glibc preloaded ahead of mimalloc, `malloc` is glibc's again and the executable says it is not mimalloc:
    /// the check looks at where a block comes from, not at what was linked.
    @Test(
        .enabled(if: FlowmeterExecutable.path != nil, "no flowmeter executable next to the test bundle: swift build"),
        .enabled(
            if: FileManager.default.fileExists(atPath: "/lib/x86_64-linux-gnu/libc.so.6"), "not a Debian amd64 layout"))
    func glibcPreloadedAheadIsReported() throws {
        let executable = try FlowmeterExecutable.requiredPath()
        let run = try Tool(path: "/usr/bin/env").run([
            "LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6", executable, "--version",
        ])
        #expect(run.succeeded, "\(run.transcript)")
        #expect(run.output.contains("allocator: not mimalloc"), "\(run.transcript)")
    }
}
