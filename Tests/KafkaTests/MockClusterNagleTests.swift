import Foundation
import TestSupport
import Testing

@testable import Kafka

#if canImport(Glibc)
    import Glibc
#endif

/// The mock brokers accept with Nagle's algorithm off, as a real broker does (`RDKafkaMockCluster.disableNagle`).
@Suite struct MockClusterNagleTests {
    #if os(Linux)
        @Test func onlyTheNamedListenersChange() throws {
            let named = try Self.listener()
            let other = try Self.listener()
            defer {
                close(named.descriptor)
                close(other.descriptor)
            }
            #expect(RDKafkaMockCluster.disableNagle(listeningOn: [named.port]) == 1)
            #expect(Self.noDelay(named.descriptor) == 1)
            #expect(Self.noDelay(other.descriptor) == 0)
        }

        @Test func portsAreReadFromABootstrapList() {
            #expect(RDKafkaMockCluster.ports(of: "127.0.0.1:39001,localhost:39002") == [39001, 39002])
            #expect(RDKafkaMockCluster.ports(of: "") == [])
        }

        @Test func brokersAcceptConnectionsWithNagleOff() throws {
            let cluster = try KafkaMockCluster(brokers: 1)
            let port = try #require(RDKafkaMockCluster.ports(of: cluster.bootstrapServers.joined(separator: ",")).first)
            try Self.expectAcceptedWithNoDelay(port: port)
            // Down and up again: the broker listens on a new socket, which needs Nagle turned off again.
            try cluster.setBrokerDown(1)
            try cluster.setBrokerUp(1)
            try Self.expectAcceptedWithNoDelay(port: port)
        }

        /// Connects to `port` and checks the socket the broker accepted for it, found among this process's own.
        private static func expectAcceptedWithNoDelay(port: UInt16) throws {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(client >= 0)
            defer { close(client) }
            var address = loopback(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(connected == 0)
            let clientPort = localPort(client)
            // The broker's thread accepts it; wait for the accepted end to show up (bounded by the hang guard).
            var accepted: Int32?
            let deadline = ContinuousClock.now + Eventually.hangGuard
            while accepted == nil, ContinuousClock.now < deadline {
                accepted = acceptedSocket(localPort: port, peerPort: clientPort)
                if accepted == nil { usleep(10_000) }
            }
            let descriptor = try #require(accepted, "the broker never accepted the connection")
            #expect(noDelay(descriptor) == 1)
        }

        private static func listener() throws -> (descriptor: Int32, port: UInt16) {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(descriptor >= 0)
            var address = loopback(port: 0)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(bound == 0 && listen(descriptor, 4) == 0)
            return (descriptor, localPort(descriptor))
        }

        private static func loopback(port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            return address
        }

        private static func localPort(_ descriptor: Int32) -> UInt16 {
            port(of: descriptor, getsockname)
        }

        private typealias NameFunction = (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) ->
            Int32

        private static func port(of descriptor: Int32, _ name: NameFunction) -> UInt16 {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(descriptor, $0, &length) }
            }
            return named == 0 && Int32(address.sin_family) == AF_INET ? UInt16(bigEndian: address.sin_port) : 0
        }

        /// This process's socket bound to `localPort` and connected to `peerPort`, if any.
        private static func acceptedSocket(localPort: UInt16, peerPort: UInt16) -> Int32? {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return descriptors.compactMap(Int32.init).first { descriptor in
                port(of: descriptor, getsockname) == localPort && port(of: descriptor, getpeername) == peerPort
            }
        }

        private static func noDelay(_ descriptor: Int32) -> Int32 {
            var value: Int32 = -1
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length) == 0 else { return -1 }
            return value
        }
    #endif
}
