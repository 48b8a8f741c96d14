/// Answers one request, now or later, from any thread.
///
/// Only the first answer is sent; later calls return false and change nothing. A handler that returns without
/// answering leaves the connection suspended (no thread is held) until an answer arrives or
/// `HTTPServerConfiguration.responseDeadline` passes, when the server answers with `timeoutResponse`.
public struct HTTPResponder: Sendable {
    let slot: ResponseSlot

    init(slot: ResponseSlot) {
        self.slot = slot
    }

    /// Makes a responder that hands the first answer to `sink`, for testing handlers without a server.
    public init(sink: @escaping @Sendable (HTTPResponse) -> Void) {
        self.slot = ResponseSlot(sink: sink)
    }

    /// Sends `response` unless the request was already answered; returns whether this answer was the one sent.
    @discardableResult
    public func respond(_ response: HTTPResponse) -> Bool {
        slot.respond(response, isFallback: false)
    }

    /// Whether the request has been answered (by the handler or by the deadline).
    public var isAnswered: Bool {
        slot.isAnswered
    }

    /// Records the matched route for `HTTPRequestCompletion.route`; the router calls this before the handler.
    public func setRoute(_ route: String) {
        slot.route.withLock { $0 = route }
    }
}
