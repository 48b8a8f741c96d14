import Collector
import FlowmeterModels
import Foundation
import HTTPServer
import Kafka
import Rollups
import Synchronization
import TestSupport
import Testing

/// `POST /v1/deploys` and `POST /v1/manifests` through ``AdminWrites``: the shared checks answer as docs/api.md says,
/// and the store write runs off the HTTP workers, so a store that hangs holds no worker.
@Suite struct AdminWritesTests {
    static let adminKey = "key-admin-0123456789"

    /// A store that records what it was given and, while `gate` is closed, blocks every write until it opens.
    final class GatedStore: CollectorStore {
        private let state = Mutex<(deploys: [DeployMarker], manifests: [CapabilityManifest], entered: Int)>(
            ([], [], 0))
        private let gate: DispatchSemaphore?
        private let fails: Bool

        init(gated: Bool = false, fails: Bool = false) {
            gate = gated ? DispatchSemaphore(value: 0) : nil
            self.fails = fails
        }

        struct Refused: Error {}

        func recordDeploy(_ deploy: DeployMarker) throws {
            state.withLock { $0.entered += 1 }
            if let gate {
                gate.wait()
                gate.signal()
            }
            if fails { throw Refused() }
            state.withLock { $0.deploys.append(deploy) }
        }

        func recordManifest(_ manifest: CapabilityManifest) throws {
            state.withLock { $0.entered += 1 }
            if fails { throw Refused() }
            state.withLock { $0.manifests.append(manifest) }
        }

        /// Lets every write waiting at the gate, and every later one, through.
        func open() { gate?.signal() }

        var entered: Int { state.withLock { $0.entered } }
        var deploys: [DeployMarker] { state.withLock { $0.deploys } }
        var manifests: [CapabilityManifest] { state.withLock { $0.manifests } }
    }

    static func fixture(store: GatedStore) throws -> CollectorFixture {
        try CollectorFixture(store: store) { configuration in
            let keysJSON = """
                {"ingestKeys": [{"key": "\(CollectorFixture.shopKey)", "apps": ["\(CollectorFixture.shopApp)"]}],
                 "adminKeys": ["\(adminKey)"]}
                """
            configuration.keys = try! IngestKeys(json: Data(keysJSON.utf8))
        }
    }

    static let marker = Array(
        #"{"service":"page-api","version":"2026.11.30-2","finishedAt":"2026-11-30T08:44:10Z"}"#.utf8)
    static let manifest = Array(
        #"{"appID":"com.example.shop","appVersion":"5.3.0","platform":"ios","types":{"card":{"required":["title"],"optional":[]}}}"#
            .utf8)

    @Test func theSharedChecksAnswerAsDocumented() async throws {
        let store = GatedStore()
        let fixture = try Self.fixture(store: store)
        for path in ["/v1/deploys", "/v1/manifests"] {
            let body = path == "/v1/deploys" ? Self.marker : Self.manifest
            let noKey = try await fixture.post(body, key: nil, path: path)
            #expect(noKey.status == 401)
            #expect(noKey.header("WWW-Authenticate") == "Bearer")
            let ingestKey = try await fixture.post(body, key: CollectorFixture.shopKey, path: path)
            #expect(ingestKey.status == 403)
            #expect(ingestKey.json["error"] as? String == "forbidden")
            let text = try await fixture.post(body, key: Self.adminKey, contentType: "text/plain", path: path)
            #expect(text.status == 415)
            let bad = try await fixture.post(Array("{}".utf8), key: Self.adminKey, path: path)
            #expect(bad.status == 400)
            #expect(bad.json["error"] as? String == "invalid_json")
            #expect(bad.json["path"] is String)
        }
        let gzip = try await fixture.post(Self.manifest, key: Self.adminKey, encoding: "gzip", path: "/v1/manifests")
        #expect(gzip.status == 415)
        #expect(store.entered == 0, "nothing refused reaches the store")

        let deploy = try await fixture.post(Self.marker, key: Self.adminKey, path: "/v1/deploys")
        #expect(deploy.status == 201)
        #expect(deploy.json["id"] as? String == store.deploys.first?.id)
        let manifest = try await fixture.post(Self.manifest, key: Self.adminKey, path: "/v1/manifests")
        #expect(manifest.status == 201)
        #expect(manifest.json["appID"] as? String == "com.example.shop")
        #expect(store.manifests.count == 1)
        #expect(try await fixture.metric(#"flowmeter_deploy_markers_total{outcome="recorded"}"#) == 1)
        #expect(try await fixture.metric(#"flowmeter_deploy_markers_total{outcome="rejected"}"#) == 4)
        #expect(try await fixture.metric(#"flowmeter_manifest_uploads_total{outcome="rejected"}"#) == 5)
        await fixture.shutdown()
    }

    @Test func aFailingStoreAnswers503AndLogs() async throws {
        let fixture = try Self.fixture(store: GatedStore(fails: true))
        let deploy = try await fixture.post(Self.marker, key: Self.adminKey, path: "/v1/deploys")
        #expect(deploy.status == 503)
        #expect(deploy.json["error"] as? String == "unavailable")
        #expect(deploy.header("Retry-After") != nil)
        #expect(fixture.logs.contains { $0.contains("could not store a deploy marker") })
        #expect(try await fixture.metric(#"flowmeter_deploy_markers_total{outcome="failed"}"#) == 1)
        await fixture.shutdown()
    }

    /// Before the write queue a deploy's store write ran on the HTTP worker: with both workers (`threads = 2`) in a
    /// hung store, no batch was answered until the store returned.
    @Test func aStuckStoreWriteHoldsNoHTTPWorker() async throws {
        let store = GatedStore(gated: true)
        // However the test ends, no write stays stuck in the store (nor its deploy's connection).
        defer { store.open() }
        let fixture = try Self.fixture(store: store)
        let deploys = (0..<3).map { _ in
            Task { try await fixture.post(Self.marker, key: Self.adminKey, path: "/v1/deploys") }
        }
        #expect(await eventually { store.entered == 1 }, "the first deploy reached the store and hangs there")
        // Every deploy is in (three, and this scrape): each waits for its answer, none for a worker.
        #expect(await eventually { (try? await fixture.metric("flowmeter_http_requests_in_flight")) ?? 0 >= 4 })
        let batch = try await fixture.post(Batches.good(events: 2))
        #expect(batch.status == 202, "a batch is answered while the store write hangs")
        #expect(store.deploys.isEmpty)
        store.open()
        for deploy in deploys {
            #expect(try await deploy.value.status == 201)
        }
        #expect(store.deploys.count == 3)
        await fixture.shutdown()
    }

    /// A request the admission check admitted carries its key's ID to the handler, which does not digest the token
    /// again: a request handed over with the ID and no token is taken under that key.
    @Test func theIngestKeyIsLookedUpOnce() async throws {
        let fixture = try CollectorFixture()
        let keyID = try #require(fixture.collector.configuration.keys.keys.first?.keyID)
        let answers = Mutex<[Int]>([])
        let request = HTTPRequest(
            method: .post, path: "/v1/diagnostics", headers: ["Content-Type": "application/json"],
            body: Batches.good(events: 1), admittedClient: keyID)
        fixture.collector.router.handle(
            request, responder: HTTPResponder { response in answers.withLock { $0.append(response.status.rawValue) } })
        #expect(answers.withLock { $0 } == [202])
        var unknown = request
        unknown.admittedClient = nil
        answers.withLock { $0 = [] }
        fixture.collector.router.handle(
            unknown, responder: HTTPResponder { response in answers.withLock { $0.append(response.status.rawValue) } })
        #expect(answers.withLock { $0 } == [401], "without the check's ID the token decides, and there is none")
        await fixture.shutdown()
    }

    /// A deploy marker takes the path every record takes to Kafka: with every broker down it waits the spool
    /// threshold, the spool takes it (201, as a batch's 202), and the replay publishes it once the brokers are back.
    @Test func aDeployMarkerRidesTheSpoolThroughAnOutage() async throws {
        let kafka = try KafkaFixture()
        let directory = try TemporaryDirectory(prefix: "flowmeter-admin-spool")
        let store = GatedStore()
        let fixture = try CollectorFixture(kafka: kafka, store: store) { configuration in
            let keysJSON = """
                {"ingestKeys": [{"key": "\(CollectorFixture.shopKey)", "apps": ["\(CollectorFixture.shopApp)"]}],
                 "adminKeys": ["\(Self.adminKey)"]}
                """
            configuration.keys = try! IngestKeys(json: Data(keysJSON.utf8))
            configuration.spool = CollectorConfiguration.DiskSpool(directory: directory.file("spool"))
        }
        try kafka.cluster.setBrokerDown(KafkaMockCluster.allBrokers)
        let deploy = try await fixture.post(Self.marker, key: Self.adminKey, path: "/v1/deploys")
        #expect(deploy.status == 201, "\(deploy.bodyText)")
        #expect(fixture.collector.spooledRecords == 1, "the marker waits in the spool")
        #expect(try await fixture.metric(#"flowmeter_deploy_markers_total{outcome="recorded"}"#) == 1)

        try kafka.cluster.setBrokerUp(KafkaMockCluster.allBrokers)
        #expect(await eventually { fixture.collector.spooledRecords == 0 }, "the replay publishes it")
        let messages = try await kafka.consumeAll(topic: KafkaFixture.deploysTopic, expecting: 1)
        #expect(messages.count == 1)
        #expect(messages.first?.key == Array("page-api".utf8))
        #expect(store.deploys.count == 1)
        await fixture.shutdown()
    }
}
