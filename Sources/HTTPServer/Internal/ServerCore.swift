import FlowmeterModels
import FlowmeterWire
import Glibc
import Synchronization

/// The state libmicrohttpd's callbacks share: configuration, the handler, counters and open connections.
///
/// Passed to every callback through `Unmanaged`; the owning `HTTPServer` keeps it alive until the daemon stopped.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: HTTPHandler
    let requestDeadlineNanoseconds: Int64
    let responseDeadlineNanoseconds: Int64
    /// Set once the server stopped accepting: responses then carry `Connection: close` so kept-alive clients leave.
    let isDraining = Atomic<Bool>(false)
    /// Set when stopping begins: a request left unanswered from then on gets the fallback at once.
    let isStopping = Atomic<Bool>(false)

    let openConnections = Atomic<Int>(0)
    let inFlightRequests = Atomic<Int>(0)
    let suspendedRequests = Atomic<Int>(0)
    let completedRequests = Atomic<Int>(0)
    let responseDeadlineExpirations = Atomic<Int>(0)
    let bodiesTooLarge = Atomic<Int>(0)
    let receiveDeadlineExpirations = Atomic<Int>(0)
    let bodyBudgetRejections = Atomic<Int>(0)
    let admissionRejections = Atomic<Int>(0)

    /// Open connections by identity; the reaper walks it, and holds its lock while shutting a socket down so
    /// libmicrohttpd cannot close (and the kernel reuse) that descriptor in between.
    let connections = Mutex<[ObjectIdentifier: ConnectionContext]>([:])
    /// Request-body buffers for reuse.
    let bodyBuffers = BodyBufferPool()
    /// Request-body bytes held at once, in total and per admitted client.
    let bodyBudget: BodyBudget

    init(configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler) {
        self.configuration = configuration
        self.handler = handler
        self.requestDeadlineNanoseconds = MonotonicClock.nanoseconds(configuration.requestDeadline)
        self.responseDeadlineNanoseconds = MonotonicClock.nanoseconds(configuration.responseDeadline)
        self.bodyBudget = BodyBudget(
            maxTotal: configuration.maxBodyBytesInFlight, maxPerClient: configuration.maxBodyBytesInFlightPerClient)
    }

    var statistics: HTTPServerStatistics {
        HTTPServerStatistics(
            openConnections: openConnections.load(ordering: .relaxed),
            inFlightRequests: inFlightRequests.load(ordering: .relaxed),
            suspendedRequests: suspendedRequests.load(ordering: .relaxed),
            completedRequests: completedRequests.load(ordering: .relaxed),
            responseDeadlineExpirations: responseDeadlineExpirations.load(ordering: .relaxed),
            bodiesTooLarge: bodiesTooLarge.load(ordering: .relaxed),
            receiveDeadlineExpirations: receiveDeadlineExpirations.load(ordering: .relaxed),
            bodyBytesInFlight: bodyBudget.reserved,
            bodyBudgetRejections: bodyBudgetRejections.load(ordering: .relaxed),
            admissionRejections: admissionRejections.load(ordering: .relaxed)
        )
    }

    // MARK: Connections

    func connectionStarted(descriptor: Int32, remoteAddress: String) -> ConnectionContext {
        let context = ConnectionContext(
            descriptor: descriptor,
            remoteAddress: remoteAddress,
            receiveDeadline: MonotonicClock.nanoseconds() + requestDeadlineNanoseconds
        )
        connections.withLock { $0[ObjectIdentifier(context)] = context }
        openConnections.add(1, ordering: .relaxed)
        return context
    }

    func connectionClosed(_ context: ConnectionContext) {
        connections.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(context)) }
        openConnections.subtract(1, ordering: .relaxed)
    }

    // MARK: Deadlines

    /// One pass of the reaper: cuts off overdue receivers and answers overdue suspended requests.
    func reapOverdue() {
        let now = MonotonicClock.nanoseconds()
        var overdue: [ResponseSlot] = []
        connections.withLock { connections in
            for connection in connections.values {
                let receiveDeadline = connection.receiveDeadline.load(ordering: .relaxed)
                if receiveDeadline != 0, now > receiveDeadline {
                    connection.receiveDeadline.store(0, ordering: .relaxed)
                    connection.wasReaped.store(true, ordering: .relaxed)
                    // libmicrohttpd sees end-of-stream on its next read and closes the connection itself.
                    _ = shutdown(connection.descriptor, Int32(SHUT_RDWR))
                    receiveDeadlineExpirations.add(1, ordering: .relaxed)
                }
                let responseDeadline = connection.responseDeadline.load(ordering: .relaxed)
                if responseDeadline != 0, now > responseDeadline {
                    connection.responseDeadline.store(0, ordering: .relaxed)
                    if let slot = connection.suspendedSlot.withLock({ $0 }) {
                        overdue.append(slot)
                    }
                }
            }
        }
        // Answered outside the registry lock: answering takes the slot lock and libmicrohttpd's cleanup mutex.
        for slot in overdue
        where slot.respond(configuration.serverAnswer(configuration.timeoutResponse), isFallback: true) {
            responseDeadlineExpirations.add(1, ordering: .relaxed)
        }
    }

    /// Answers every suspended request with the fallback now; used when stopping.
    func answerAllSuspended() {
        let slots = connections.withLock { connections in
            connections.values.compactMap { $0.suspendedSlot.withLock { $0 } }
        }
        for slot in slots
        where slot.respond(configuration.serverAnswer(configuration.timeoutResponse), isFallback: true) {
            responseDeadlineExpirations.add(1, ordering: .relaxed)
        }
    }
}

/// The function a request is handed to, with the responder that answers it.
///
/// Runs on a libmicrohttpd worker thread: never block in it. Answer with `responder.respond(_:)` before
/// returning, or return and answer later from any thread.
public typealias HTTPHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void
