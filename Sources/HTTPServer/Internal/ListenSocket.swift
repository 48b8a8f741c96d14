import Glibc

/// The server's listening socket, bound before libmicrohttpd starts so a taken port is a clear, typed error and
/// the bound port is known without asking the daemon.
struct ListenSocket {
    let descriptor: Int32
    let port: UInt16

    static func bind(host: String, port: UInt16, backlog: Int) throws(HTTPServerError) -> ListenSocket {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        let family: Int32
        if inet_pton(AF_INET, host, &ipv4) == 1 {
            family = AF_INET
        } else if inet_pton(AF_INET6, host, &ipv6) == 1 {
            family = AF_INET6
        } else {
            throw HTTPServerError(.invalidAddress, "host '\(host)' is not an IPv4 or IPv6 address literal")
        }
        let descriptor = socket(
            family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
                | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else {
            throw HTTPServerError(.socketFailed, "socket() failed: \(errnoText())")
        }
        var enable: Int32 = 1
        // Lets a restarted server rebind while old connections sit in TIME_WAIT; a live listener still conflicts.
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &enable, socklen_t(MemoryLayout<Int32>.size))

        let bindResult: Int32
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = ipv4
            bindResult = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = ipv6
            bindResult = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        if bindResult != 0 {
            let code = errno
            let text = errnoText()
            close(descriptor)
            if code == EADDRINUSE {
                throw HTTPServerError(.addressInUse, "\(host):\(port) is already in use")
            }
            throw HTTPServerError(.socketFailed, "bind(\(host):\(port)) failed: \(text)")
        }
        guard listen(descriptor, Int32(clamping: backlog)) == 0 else {
            let text = errnoText()
            close(descriptor)
            throw HTTPServerError(.socketFailed, "listen() failed: \(text)")
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let boundPort = withUnsafePointer(to: &bound) { pointer -> UInt16 in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin6_port)
            }
        }
        return ListenSocket(descriptor: descriptor, port: boundPort)
    }

    private static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
