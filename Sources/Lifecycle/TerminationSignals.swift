import Glibc
import Synchronization

/// SIGTERM and SIGINT as a stream, for as long as this subscription lives; any number of subscriptions, at once or
/// one after another, in one process (``ServiceGroup`` makes one for each run).
///
/// The process installs one handler for both signals, once: it only writes the signal's number to a pipe, which a
/// thread named `signals` reads and hands to every current subscription. A handler is process-wide and runs on
/// whichever thread the kernel picks, so no thread's signal mask can make a signal go missing (dispatch signal
/// sources, used before, block the signal in one thread and leave it ignored in the rest: a second group never
/// heard Ctrl-C). While no subscription is live, a signal does what it would without Flowmeter: it ends the
/// process.
public final class TerminationSignals: Sendable {
    /// Every termination signal as it arrives (one consumer), until ``cancel()``.
    public let received: AsyncStream<Int32>
    private let token: UInt64

    /// Subscribes to SIGTERM and SIGINT.
    public convenience init() {
        self.init(signals: [SIGTERM, SIGINT])
    }

    /// Subscribes to `signals` (tests use a signal no service group listens to).
    init(signals: Set<Int32>) {
        let (received, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.received = received
        token = SignalHub.shared.subscribe(continuation, to: signals)
    }

    deinit {
        cancel()
    }

    /// Ends the subscription (and `received`); idempotent.
    public func cancel() {
        SignalHub.shared.unsubscribe(token)
    }

    /// The first termination signal received.
    public func wait() async -> Int32 {
        for await signalNumber in received {
            return signalNumber
        }
        return SIGTERM
    }
}

/// The write end of the signal pipe, for the handler; set once before the handler is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// The process's one handler for SIGTERM and SIGINT: async-signal-safe, it only writes the signal's number.
private func terminationSignalHandler(_ signalNumber: Int32) {
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = savedErrno
}

/// The process-wide subscriptions, the handler and the `signals` thread that reads the pipe.
private final class SignalHub: Sendable {
    static let shared = SignalHub()

    private struct Subscriber {
        var continuation: AsyncStream<Int32>.Continuation
        var signals: Set<Int32>
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var next: UInt64 = 0
        var handled: Set<Int32> = []
        var hasPipe = false
    }

    private let state = Mutex(State())

    func subscribe(_ continuation: AsyncStream<Int32>.Continuation, to signals: Set<Int32>) -> UInt64 {
        // Under the lock, so two first subscribers cannot both install.
        state.withLock { state in
            if !state.hasPipe { state.hasPipe = openPipe() }
            if state.hasPipe {
                for signalNumber in signals.subtracting(state.handled) { handle(signalNumber) }
                state.handled.formUnion(signals)
            }
            state.next += 1
            state.subscribers[state.next] = Subscriber(continuation: continuation, signals: signals)
            return state.next
        }
    }

    func unsubscribe(_ token: UInt64) {
        state.withLock { $0.subscribers.removeValue(forKey: token) }?.continuation.finish()
    }

    /// Opens the pipe and starts the `signals` thread that reads it; false when there is no pipe (then no handler
    /// is installed and a signal keeps its default action: the process ends).
    private func openPipe() -> Bool {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { return false }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        // A full pipe (thousands of unread signals) drops a signal rather than block the handler.
        _ = fcntl(descriptors[1], F_SETFL, fcntl(descriptors[1], F_GETFL) | O_NONBLOCK)
        signalPipeWriteEnd = descriptors[1]
        let readEnd = descriptors[0]
        startThread(named: "signals") { [self] in
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 {
                    deliver(Int32(byte))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        return true
    }

    /// Installs the handler for `signalNumber`.
    private func handle(_ signalNumber: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = terminationSignalHandler
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(signalNumber, &action, nil)
        // Undo a mask a parent process may have left on this thread.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private func deliver(_ signalNumber: Int32) {
        let subscribers = state.withLock { state in
            state.subscribers.values.filter { $0.signals.contains(signalNumber) }.map(\.continuation)
        }
        guard !subscribers.isEmpty else {
            // No one is listening: the signal's default action, as if Flowmeter had never handled it.
            signal(signalNumber, SIG_DFL)
            raise(signalNumber)
            return
        }
        for subscriber in subscribers { subscriber.yield(signalNumber) }
    }
}
