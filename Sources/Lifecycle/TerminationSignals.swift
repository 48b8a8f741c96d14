import Dispatch
import Glibc

/// Waits for SIGTERM or SIGINT through dispatch sources, so no signal handler runs arbitrary code.
///
/// Creating it makes both signals ignored by default delivery and routes them to a dispatch queue; `wait()`
/// returns the first one to arrive, `received` yields each. Make one per process: ``ServiceGroup`` makes it.
// The dispatch sources are made once in `init` and only kept alive after it; the stream is Sendable.
public final class TerminationSignals: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    /// Every termination signal as it arrives (one consumer).
    public let received: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    /// Routes SIGTERM and SIGINT to this waiter.
    public init() {
        (received, continuation) = AsyncStream.makeStream(of: Int32.self)
        let queue = DispatchQueue(label: "termination-signals")
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
        for await signalNumber in received {
            return signalNumber
        }
        return SIGTERM
    }
}
