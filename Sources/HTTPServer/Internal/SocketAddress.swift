import Glibc

/// Converts between textual addresses and `sockaddr` storage for the listen socket and peer addresses.
enum SocketAddress {
    static func describe(_ address: UnsafePointer<sockaddr>) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var ip = ipv4.pointee.sin_addr
                inet_ntop(AF_INET, &ip, &text, socklen_t(text.count))
                return "\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)):"
                    + "\(UInt16(bigEndian: ipv4.pointee.sin_port))"
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                var ip = ipv6.pointee.sin6_addr
                inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count))
                return "[\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))]:"
                    + "\(UInt16(bigEndian: ipv6.pointee.sin6_port))"
            }
        default:
            return ""
        }
    }
}
