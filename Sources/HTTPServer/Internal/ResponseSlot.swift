import CMicroHTTPD
import Synchronization

/// A libmicrohttpd connection pointer that may cross threads.
///
/// Safe because the only calls made on it from other threads are `MHD_resume_connection`, which libmicrohttpd
/// documents as callable from any thread, and only while the connection is suspended and therefore alive.
struct MHDConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The one place a request's answer lands: the first answer wins, later ones are ignored.
///
/// The suspend and resume calls happen under the slot's lock, so a resume can never precede its suspend (which
/// libmicrohttpd calls undefined behaviour) however the handler's thread and the answering thread interleave.
/// Both calls only take libmicrohttpd's cleanup mutex briefly and never call back into Swift.
final class ResponseSlot: Sendable {
    enum Phase {
        case pending
        case suspended
        case answered(HTTPResponse, isFallback: Bool)
        case delivered
    }

    enum AfterHandler {
        case answered(HTTPResponse, isFallback: Bool)
        case suspended
    }

    private let phase = Mutex<Phase>(.pending)
    private let connection: MHDConnectionHandle?
    private let sink: (@Sendable (HTTPResponse) -> Void)?
    /// The matched route, written by the router; its own lock so reading it never waits on libmicrohttpd.
    let route = Mutex<String?>(nil)

    init(connection: OpaquePointer) {
        self.connection = MHDConnectionHandle(pointer: connection)
        self.sink = nil
    }

    init(sink: @escaping @Sendable (HTTPResponse) -> Void) {
        self.connection = nil
        self.sink = sink
    }

    /// Stores the answer if none was stored yet, and resumes the connection if it was suspended.
    func respond(_ response: HTTPResponse, isFallback: Bool) -> Bool {
        let won = phase.withLock { phase -> Bool in
            switch phase {
            case .pending:
                phase = .answered(response, isFallback: isFallback)
                return true
            case .suspended:
                phase = .answered(response, isFallback: isFallback)
                if let connection {
                    MHD_resume_connection(connection.pointer)
                }
                return true
            case .answered, .delivered:
                return false
            }
        }
        if won, let sink {
            sink(response)
        }
        return won
    }

    var isAnswered: Bool {
        phase.withLock { phase in
            switch phase {
            case .pending, .suspended: false
            case .answered, .delivered: true
            }
        }
    }

    /// Called on the libmicrohttpd thread once the handler returned: takes the answer, or suspends the connection.
    func takeAnswerOrSuspend() -> AfterHandler {
        phase.withLock { phase in
            if case .answered(let response, let isFallback) = phase {
                phase = .delivered
                return .answered(response, isFallback: isFallback)
            }
            if let connection {
                MHD_suspend_connection(connection.pointer)
            }
            phase = .suspended
            return .suspended
        }
    }

    /// Called on the libmicrohttpd thread after a resume: takes the answer that caused it.
    func takeAnswer() -> (HTTPResponse, isFallback: Bool)? {
        phase.withLock { phase in
            guard case .answered(let response, let isFallback) = phase else { return nil }
            phase = .delivered
            return (response, isFallback)
        }
    }
}
