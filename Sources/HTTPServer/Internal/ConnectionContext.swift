import Synchronization

/// What the server tracks per open connection, so the deadline reaper can find overdue requests.
///
/// Created when libmicrohttpd reports a new connection and kept in its socket context until it reports the close.
final class ConnectionContext: Sendable {
    let descriptor: Int32
    let remoteAddress: String
    /// Monotonic nanoseconds by which the current request must be fully received; 0 while none is being received.
    let receiveDeadline: Atomic<Int64>
    /// Monotonic nanoseconds by which a suspended request must be answered; 0 while none is suspended.
    let responseDeadline: Atomic<Int64>
    /// Set when the reaper shut the socket down, so the completion reports why the request ended.
    let wasReaped = Atomic<Bool>(false)
    /// The suspended request's answer slot, for the reaper to answer with the fallback.
    let suspendedSlot = Mutex<ResponseSlot?>(nil)

    init(descriptor: Int32, remoteAddress: String, receiveDeadline: Int64) {
        self.descriptor = descriptor
        self.remoteAddress = remoteAddress
        self.receiveDeadline = Atomic(receiveDeadline)
        self.responseDeadline = Atomic(0)
    }
}
