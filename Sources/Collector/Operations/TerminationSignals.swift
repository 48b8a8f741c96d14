import Dispatch
import Glibc

/// Waits for SIGTERM or SIGINT through dispatch sources, so no signal handler runs arbitrary code.
///
/// Creating it makes both signals ignored by default delivery and routes them to a dispatch queue; `wait()`
/// returns the first one to arrive. Make one per process (the CLI's `sink` and `watch` commands use it too).
public final class TerminationSignals {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    /// Routes SIGTERM and SIGINT to this waiter.
    public init() {
        (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let queue = DispatchQueue(label: "collector-signals")
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { [continuation] in continuation.yield(signalNumber) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// The first termination signal received.
    public func wait() async -> Int32 {
        for await signalNumber in stream {
            return signalNumber
        }
        return SIGTERM
    }
}
