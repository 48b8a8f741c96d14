import Foundation

/// One reading of a ``ReporterClock``: the wall clock, for what is sent and named, and the uptime, for everything
/// measured.
struct ReporterTime: Sendable {
    /// The wall clock: `sentAt`, batch file names, `Retry-After` dates. The user or the network may set it.
    var wall: Date
    /// Seconds on the clock nobody sets (``ReporterClock/uptime()``): pacing, backoff, waits, batch ages.
    var uptime: TimeInterval

    init(wall: Date, uptime: TimeInterval) {
        self.wall = wall
        self.uptime = uptime
    }

    init(_ clock: any ReporterClock) {
        self.init(wall: clock.now(), uptime: clock.uptime())
    }
}
