import Foundation
import TestSupport
import Testing

/// `serve --http-connection-memory`: the per-connection memory libmicrohttpd keeps for the request line and headers.
@Suite struct ServeConnectionMemoryTests {
    /// The same 30,000-byte header: refused with 431 at the default 16 KiB, taken at 64 KiB.
    @Test func largerConnectionMemoryTakesLargerHeaders() async throws {
        let header = [("X-Trace", String(repeating: "t", count: 30_000))]
        for (arguments, expected) in [([String](), 431), (["--http-connection-memory", "64KiB"], 200)] {
            let serve = try await ServeProcess(["--kafka", "none"] + arguments)
            let port = serve.port
            let answer = try await HTTPTestClient.onThread {
                let client = try HTTPTestClient(port: port, readTimeout: .seconds(15))
                defer { client.close() }
                return try client.request("GET", "/healthz", headers: header)
            }
            #expect(answer.status == expected, "\(arguments): \(answer.status) \(answer.bodyText)")
            #expect(try await serve.terminate() == 0)
        }
    }

    /// Below 4 KiB or above 16 MiB, or not a byte count, serve refuses to start and says why.
    @Test func outOfRangeConnectionMemoryIsRefused() async throws {
        for value in ["1KiB", "32MiB", "lots"] {
            let result = try await ServeProcess.runRefusing(["--spool", "none", "--http-connection-memory", value])
            #expect(result.status != 0, "\(value)")
            #expect(result.errors.contains("http-connection-memory"), "\(value): \(result.errors)")
        }
    }
}
