/// `flowmeter demo`: the pipeline end to end on the embedded default, for `make demo`.
enum DemoCommand {
    static var command: Command {
        Command(
            name: "demo",
            abstract: "Run the pipeline end to end on the embedded default and print what it found.",
            options: [],
            run: { _ in
                print("demo: the pipeline is being assembled")
                return 0
            }
        )
    }
}
