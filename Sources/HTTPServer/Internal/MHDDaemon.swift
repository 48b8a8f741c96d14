import CMicroHTTPD
import Glibc

/// The running libmicrohttpd daemon: started on our listen socket with every limit set, quiesced, stopped.
///
/// Holds the raw daemon pointer; `HTTPServer` serializes every call through its lifecycle lock.
struct MHDDaemon: @unchecked Sendable {
    private let daemon: OpaquePointer

    static func start(core: ServerCore, listenSocket: ListenSocket) throws(HTTPServerError) -> MHDDaemon {
        let configuration = core.configuration
        let context = Unmanaged.passUnretained(core).toOpaque()
        // Poll, not epoll: in 0.9.75 epoll mode starves accepts when many clients connect at once
        // (docs/reliability.md).
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_POLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ITC.rawValue
        if configuration.logHandler != nil {
            flags |= MHD_USE_ERROR_LOG.rawValue
        }
        var options: [MHD_OptionItem] = [
            item(MHD_OPTION.LISTEN_SOCKET, Int(listenSocket.descriptor)),
            item(MHD_OPTION.THREAD_POOL_SIZE, max(1, configuration.threadPoolSize)),
            item(MHD_OPTION.CONNECTION_LIMIT, max(1, configuration.connectionLimit)),
            item(MHD_OPTION.PER_IP_CONNECTION_LIMIT, max(0, configuration.perIPConnectionLimit)),
            item(MHD_OPTION.CONNECTION_TIMEOUT, wholeSecondsRoundedUp(configuration.inactivityTimeout)),
            item(MHD_OPTION.CONNECTION_MEMORY_LIMIT, max(4096, configuration.connectionMemoryLimit)),
            item(MHD_OPTION.CONNECTION_MEMORY_INCREMENT, max(1024, configuration.connectionMemoryIncrement)),
            callback(MHD_OPTION.NOTIFY_COMPLETED, MHDCallbacks.requestCompleted, context),
            callback(MHD_OPTION.NOTIFY_CONNECTION, MHDCallbacks.connectionNotification, context),
            callback(MHD_OPTION.EXTERNAL_LOGGER, MHDCallbacks.log, context),
            item(MHD_OPTION.END, 0),
        ]
        let started = options.withUnsafeMutableBufferPointer { buffer in
            withVaList([
                Int32(bitPattern: MHD_OPTION.ARRAY.rawValue), buffer.baseAddress!,
                Int32(bitPattern: MHD_OPTION.END.rawValue),
            ]) { arguments in
                MHD_start_daemon_va(flags, 0, nil, nil, MHDCallbacks.accessHandler, context, arguments)
            }
        }
        guard let started else {
            throw HTTPServerError(.daemonStartFailed, "libmicrohttpd refused to start with the configured options")
        }
        return MHDDaemon(daemon: started)
    }

    /// Stops accepting; returns the listen socket, which the caller closes.
    func quiesce() -> Int32 {
        MHD_quiesce_daemon(daemon)
    }

    func stop() {
        MHD_stop_daemon(daemon)
    }

    private static func item(_ option: MHD_OPTION, _ value: Int) -> MHD_OptionItem {
        MHD_OptionItem(option: option, value: value, ptr_value: nil)
    }

    private static func callback<Function>(
        _ option: MHD_OPTION,
        _ function: Function,
        _ context: UnsafeMutableRawPointer
    ) -> MHD_OptionItem {
        // Options taking a function and its closure carry the function in `value` (MHD_OptionItem docs).
        MHD_OptionItem(option: option, value: unsafeBitCast(function, to: Int.self), ptr_value: context)
    }

    private static func wholeSecondsRoundedUp(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
