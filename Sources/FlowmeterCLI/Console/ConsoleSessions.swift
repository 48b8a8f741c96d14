import Collector
import FlowmeterModels
import Foundation
import Synchronization

/// The console's signed-in sessions: a random id in the cookie, what the key may read on the server.
///
/// The key itself is kept nowhere: signing in checks it once (``IngestKeys/readAccess(token:)``) and keeps only the
/// access it grants. Sessions live in memory, so a restart signs everyone out; they expire after `lifetime`, and
/// past `capacity` the oldest goes first.
final class ConsoleSessions: Sendable {
    private struct Session {
        var access: IngestKeys.ReadAccess
        var expires: Date
    }

    private let sessions = Mutex<[String: Session]>([:])
    private let lifetime: TimeInterval
    private let capacity: Int

    /// Sessions that last `lifetime` seconds (default 12 h), at most `capacity` at once.
    init(lifetime: TimeInterval = 12 * 3600, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// How long a session lasts, for the cookie's `Max-Age`.
    var maxAge: Int { Int(lifetime) }

    /// Starts a session for `access`; returns its id (32 random bytes, hex).
    func start(_ access: IngestKeys.ReadAccess, now: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expires > now }
            if sessions.count >= capacity, let oldest = sessions.min(by: { $0.value.expires < $1.value.expires }) {
                sessions.removeValue(forKey: oldest.key)
            }
            sessions[id] = Session(access: access, expires: now.addingTimeInterval(lifetime))
        }
        return id
    }

    /// What the session `id` may read, or nil when there is no such session or it expired.
    func access(_ id: String?, now: Date = Date()) -> IngestKeys.ReadAccess? {
        guard let id, !id.isEmpty else { return nil }
        return sessions.withLock { sessions in
            guard let session = sessions[id] else { return nil }
            guard session.expires > now else {
                sessions.removeValue(forKey: id)
                return nil
            }
            return session.access
        }
    }

    /// Ends the session `id`.
    func end(_ id: String?) {
        guard let id else { return }
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }
}
