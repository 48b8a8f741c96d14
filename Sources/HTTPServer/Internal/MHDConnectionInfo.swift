import CMicroHTTPD
import Glibc

/// Reads per-connection facts (socket, peer address, socket context) from libmicrohttpd.
///
/// `MHD_get_connection_info` is variadic, and Swift imports no variadic C function. The kinds read here take no
/// variadic argument, so the symbol is called through a fixed-arity pointer: on the System V x86-64 and AAPCS64
/// ABIs that Linux uses, a variadic callee given no variadic arguments sees exactly what a fixed-arity one does.
/// A two-line `static inline` wrapper in the `CMicroHTTPD` shim header would remove this indirection.
enum MHDConnectionInfo {
    private typealias Function = @convention(c) (
        OpaquePointer?, MHD_ConnectionInfoType
    ) -> UnsafePointer<MHD_ConnectionInfo>?

    private static let function: Function = {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "MHD_get_connection_info") else {
            fatalError("libmicrohttpd is linked but MHD_get_connection_info was not found")
        }
        return unsafeBitCast(symbol, to: Function.self)
    }()

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
