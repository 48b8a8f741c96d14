import FlowmeterCLI

#if canImport(Glibc)
    import Glibc
#endif

// Thin by design: parse and dispatch live in FlowmeterCLI, where tests reach them too.
let status = await FlowmeterCommands.main(Array(CommandLine.arguments.dropFirst()))
exit(status)
