/// A request while libmicrohttpd delivers it: touched only on the worker thread that owns its connection.
///
/// Lives in libmicrohttpd's per-request context from the first access-handler call to the completion callback.
final class RequestState {
    enum Stage {
        case receiving
        case suspended
        case answered
    }

    let slot: ResponseSlot
    let connection: ConnectionContext
    let method: HTTPMethod
    let path: String
    let startNanoseconds: Int64
    var stage = Stage.receiving
    var body: [UInt8] = []
    /// The headers as read in the first call when an admission check needed them, reused by the handler.
    var headers: HTTPHeaders?
    /// The client the admission check named.
    var client: String?
    /// Body-budget bytes this request holds; given back after the handler returned, or at completion.
    var reservedBytes = 0
    var queuedStatus: HTTPStatus?
    var answeredByFallback = false
    /// Set when the server itself ends the request without a response, to report why.
    var abortReason: HTTPRequestCompletion.Outcome?

    init(slot: ResponseSlot, connection: ConnectionContext, method: HTTPMethod, path: String, start: Int64) {
        self.slot = slot
        self.connection = connection
        self.method = method
        self.path = path
        self.startNanoseconds = start
    }
}
