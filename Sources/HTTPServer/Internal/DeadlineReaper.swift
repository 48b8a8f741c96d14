import FlowmeterModels
import FlowmeterWire
import Foundation
import Synchronization

/// A named thread that enforces the deadlines libmicrohttpd cannot: slow requests and unanswered suspensions.
final class DeadlineReaper: Sendable {
    private let isStopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(core: ServerCore) {
        let interval = max(MonotonicClock.nanoseconds(core.configuration.reaperInterval), 1_000_000)
        let thread = Thread { [self] in
            while !self.isStopping.load(ordering: .relaxed) {
                var pause = timespec(tv_sec: Int(interval / 1_000_000_000), tv_nsec: Int(interval % 1_000_000_000))
                nanosleep(&pause, nil)
                core.reapOverdue()
            }
            self.finished.signal()
        }
        thread.name = "HTTPServer.reaper"
        thread.start()
    }

    /// Stops the thread and waits for its current pass to end.
    func stop() {
        isStopping.store(true, ordering: .relaxed)
        finished.wait()
    }
}
