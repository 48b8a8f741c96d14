import CMicroHTTPD

/// Reads per-connection facts (socket, peer address, socket context) from libmicrohttpd.
///
/// `MHD_get_connection_info` is variadic, which Swift cannot call; the shim header's `cmhd_connection_info` calls it
/// with no variadic argument, which is all the kinds read here need.
enum MHDConnectionInfo {
    private static func function(
        _ connection: OpaquePointer, _ kind: MHD_ConnectionInfoType
    ) -> UnsafePointer<MHD_ConnectionInfo>? {
        cmhd_connection_info(connection, kind)
    }
    static func socket(of connection: OpaquePointer) -> Int32 {
        function(connection, MHD_ConnectionInfoType.CONNECTION_INFO_CONNECTION_FD)?.pointee.connect_fd ?? -1
    }

    static func socketContext(of connection: OpaquePointer) -> UnsafeMutableRawPointer? {
        function(connection, MHD_ConnectionInfoType.CONNECTION_INFO_SOCKET_CONTEXT)?.pointee.socket_context
    }

    static func remoteAddress(of connection: OpaquePointer) -> String {
        let info = function(connection, MHD_ConnectionInfoType.CONNECTION_INFO_CLIENT_ADDRESS)
        guard let address = info?.pointee.client_addr else {
            return ""
        }
        return SocketAddress.describe(address)
    }
}
