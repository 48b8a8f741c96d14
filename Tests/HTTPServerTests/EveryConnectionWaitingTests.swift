import HTTPServer
import Synchronization
import TestSupport
import Testing

/// `onEveryConnectionWaiting` runs when a suspension leaves no open connection without a suspended request, and
/// not while another connection could still send one.
@Suite struct EveryConnectionWaitingTests {
    final class Calls: Sendable {
        let count = Atomic<Int>(0)
    }

    @Test func runsOnceTheLastOpenConnectionIsSuspendedNotBefore() async throws {
        let held = ResponderBox()
        let calls = Calls()
        var configuration = ServerFixture.configuration(responseDeadline: .seconds(30))
        configuration.onEveryConnectionWaiting = { calls.count.add(1, ordering: .relaxed) }
        try await ServerFixture.withServer(configuration, router: held.holdingRouter()) { server in
            let port = server.port
            let clients = try await HTTPTestClient.onThread { () -> [SendableClient] in
                try (0..<2).map { _ in SendableClient(try HTTPTestClient(port: port, readTimeout: .seconds(10))) }
            }
            #expect(await ServerFixture.eventually { server.statistics.openConnections == 2 })

            // One of two connections waits: the other could still bring a request.
            try await HTTPTestClient.onThread { try clients[0].client.sendRequest("POST", "/held", body: [1]) }
            #expect(await ServerFixture.eventually { server.statistics.suspendedRequests == 1 })
            #expect(calls.count.load(ordering: .relaxed) == 0)

            // Both wait: nothing more can arrive until one is answered.
            try await HTTPTestClient.onThread { try clients[1].client.sendRequest("POST", "/held", body: [2]) }
            #expect(await ServerFixture.eventually { server.statistics.suspendedRequests == 2 })
            #expect(await ServerFixture.eventually { calls.count.load(ordering: .relaxed) == 1 })

            #expect(held.answerAll(.json(status: .accepted, "{}")) == 2)
            let statuses = try await HTTPTestClient.onThread { try clients.map { try $0.client.readResponse().status } }
            #expect(statuses == [202, 202])
            #expect(calls.count.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aRequestAnsweredWithoutSuspendingNeverRunsIt() async throws {
        let calls = Calls()
        var configuration = ServerFixture.configuration()
        configuration.onEveryConnectionWaiting = { calls.count.add(1, ordering: .relaxed) }
        try await ServerFixture.withServer(configuration, router: ServerFixture.router()) { server in
            let port = server.port
            let status = try await HTTPTestClient.onThread {
                try HTTPTestClient(port: port).request("GET", "/healthz").status
            }
            #expect(status == 200)
            #expect(calls.count.load(ordering: .relaxed) == 0)
        }
    }
}
