import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A connection a mock broker has accepted and answered, held while the broker goes down, so that no other socket
/// can take the broker's port while librdkafka binds it again.
///
/// librdkafka's mock (2.0.2, Debian 12's) takes a broker down by closing its listening socket and binding a new one
/// to the same port at once; it asserts that the bind worked, and the failed assertion aborts the process. A
/// connection the broker accepted stays bound to the port (with the listener's `SO_REUSEADDR`) until the broker
/// closes it after that bind, so the port is never free in between: a socket without `SO_REUSEADDR` cannot bind it,
/// and the kernel gives it to no `connect` or `bind` to port 0. Without a connection (a broker no client reached)
/// the port is free for that moment, and a busy machine took it (`MockBrokerDownTests`).
///
/// The broker must have accepted the connection, not only the kernel: a connection still in the listener's queue
/// is reset with it. So the hold sends an `ApiVersions` request and waits for the answer's first bytes.
struct MockBrokerPortHold: ~Copyable {
    private let descriptor: Int32

    /// Connects to the broker on `port` of 127.0.0.1 and waits up to `timeout` seconds for an answer; nil when
    /// the broker does not answer (it is not listening: nothing to hold).
    init?(port: UInt16, timeout: Int = 5) {
        #if os(Linux)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return nil }
            var wait = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0, Self.exchangeApiVersions(descriptor) else {
                close(descriptor)
                return nil
            }
            self.descriptor = descriptor
        #else
            return nil
        #endif
    }

    /// Closes the connection (the broker that went down has closed its end).
    consuming func release() {
        close(descriptor)
        discard self
    }

    deinit {
        close(descriptor)
    }

    /// Sends `ApiVersions` v0 (correlation id 1, client id "hold") and reads the answer's size and correlation id.
    private static func exchangeApiVersions(_ descriptor: Int32) -> Bool {
        let request: [UInt8] = [
            0, 0, 0, 14,  // size of what follows
            0, 18,  // ApiVersions
            0, 0,  // version 0
            0, 0, 0, 1,  // correlation id
            0, 4, 0x68, 0x6F, 0x6C, 0x64,  // client id "hold"
        ]
        let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { return false }
        var answer = [UInt8](repeating: 0, count: 8)
        var received = 0
        while received < answer.count {
            let count = answer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress! + received, $0.count - received, 0)
            }
            guard count > 0 else { return false }
            received += count
        }
        return answer[4..<8] == [0, 0, 0, 1]
    }
}
