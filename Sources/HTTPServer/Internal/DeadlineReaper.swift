import FlowmeterModels
import FlowmeterWire
import Lifecycle

/// The thread (`http-reaper`) that enforces the deadlines libmicrohttpd cannot: slow requests and unanswered
/// suspensions, every `reaperInterval`.
final class DeadlineReaper: Sendable {
    private let loop: LoopThread

    init(core: ServerCore) {
        let interval = max(core.configuration.reaperInterval, .milliseconds(1))
        loop = LoopThread.start(named: "http-reaper") { loop in
            while loop.wait(for: interval) { core.reapOverdue() }
        }
    }

    /// Stops the thread at once and waits for its current pass to end; for a caller on a thread of its own.
    func stop() {
        loop.stop()
        loop.join(timeout: .seconds(Int64.max))
    }

    /// Stops the thread at once and suspends until its current pass has ended.
    func stop() async {
        await loop.stopAndJoin()
    }
}
