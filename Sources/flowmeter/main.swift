import FlowmeterCLI
import ProcessAllocator

#if canImport(Glibc)
    import Glibc
#endif

// Thin by design: parse and dispatch live in FlowmeterCLI, where tests reach them too. The allocator is linked here
// (ProcessAllocator), and only here and in flowmeter-bench.
let status = await FlowmeterCommands.main(
    Array(CommandLine.arguments.dropFirst()), buildDetails: ["allocator: \(ProcessAllocator.name)"])
exit(status)
