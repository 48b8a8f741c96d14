import CMicroHTTPD
import Glibc

/// The C callbacks libmicrohttpd calls, each a private free function taking the `ServerCore` through `Unmanaged`.
enum MHDCallbacks {
    static let accessHandler: MHD_AccessHandlerCallback = handleAccess
    static let requestCompleted: MHD_RequestCompletedCallback = completeRequest
    static let connectionNotification: MHD_NotifyConnectionCallback = notifyConnection
    static let log: MHD_LogCallback = logMessage
}

private func handleAccess(
    context: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?,
    uploadData: UnsafePointer<CChar>?,
    uploadSize: UnsafeMutablePointer<Int>?,
    requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection, let uploadSize, let requestContext else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    guard let existing = requestContext.pointee else {
        return core.beginRequest(connection: connection, url: url, method: method, requestContext: requestContext)
    }
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    return core.continueRequest(state, connection: connection, uploadData: uploadData, uploadSize: uploadSize)
}

private func completeRequest(
    context: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    termination: MHD_RequestTerminationCode
) {
    guard let context, let requestContext, let existing = requestContext.pointee else { return }
    requestContext.pointee = nil
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeRetainedValue()
    core.finishRequest(state, termination: termination)
}

private func notifyConnection(
    context: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    notification: MHD_ConnectionNotificationCode
) {
    guard let context, let socketContext else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    if notification == MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_STARTED {
        guard let connection else { return }
        let started = core.connectionStarted(
            descriptor: MHDConnectionInfo.socket(of: connection),
            remoteAddress: MHDConnectionInfo.remoteAddress(of: connection)
        )
        socketContext.pointee = Unmanaged.passRetained(started).toOpaque()
    } else if notification == MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_CLOSED,
        let existing = socketContext.pointee
    {
        socketContext.pointee = nil
        core.connectionClosed(Unmanaged<ConnectionContext>.fromOpaque(existing).takeRetainedValue())
    }
}

private func logMessage(context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVaListPointer?) {
    guard let context, let format, let arguments else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    guard let logHandler = core.configuration.logHandler else { return }
    var buffer = [CChar](repeating: 0, count: 1024)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    logHandler(String(decoding: bytes, as: UTF8.self).trimmingTrailingNewlines())
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var trimmed = Substring(self)
        while let last = trimmed.last, last.isNewline { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }
}
