import Foundation
import TestSupport
import Testing

/// The console's sign-in over HTTP against the real `flowmeter serve`: the cookie's flags, the origin check of the
/// form posts, the page policy, and that the key shows up in no answer, cookie or log line.
@Suite(.serialized) struct ConsoleSignInTests {
    @Test func signInSetsASessionCookieRefusesOtherSitesAndNeverShowsTheKey() async throws {
        let seeded = try SeededStore()
        let serve = try await ReadAPITests.serve(seeded, logLevel: "debug")
        defer { _ = serve.child.terminate(timeout: .seconds(20)) }
        let form = Array("key=\(ReadAPITests.allKey)&next=%2Fconsole%2Fgates".utf8)
        // HTTPTestClient sends `Host: 127.0.0.1`; the console's own pages post with the same origin.
        let host = "127.0.0.1"
        func post(_ path: String, _ headers: [(String, String)], body: [UInt8] = form) throws -> HTTPTestResponse {
            let client = try HTTPTestClient(port: serve.port)
            defer { client.close() }
            return try client.request(
                "POST", path,
                headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers, body: body)
        }

        // Another site's form post is refused, with or without Origin.
        let crossOrigin = try post("/console/sign-in", [("Origin", "http://evil.example")])
        #expect(crossOrigin.status == 403)
        #expect(crossOrigin.header("Set-Cookie") == nil)
        let crossFetch = try post("/console/sign-in", [("Sec-Fetch-Site", "cross-site")])
        #expect(crossFetch.status == 403)

        // A wrong key: 401 and the form again.
        let wrong = try post(
            "/console/sign-in", [("Origin", "http://\(host)")], body: Array("key=nope&next=%2Fconsole%2F".utf8))
        #expect(wrong.status == 401 && wrong.header("Set-Cookie") == nil)

        // The right key from the console's own page: 303 to `next` with the session cookie.
        let signedIn = try post("/console/sign-in", [("Origin", "http://\(host)")])
        #expect(signedIn.status == 303)
        #expect(signedIn.header("Location") == "/console/gates")
        let cookie = try #require(signedIn.header("Set-Cookie"))
        #expect(cookie.hasPrefix("flowmeter_console="))
        for flag in ["HttpOnly", "SameSite=Strict", "Path=/console"] { #expect(cookie.contains(flag), "\(cookie)") }
        #expect(!cookie.contains("Secure"), "plain HTTP: \(cookie)")
        #expect(!cookie.contains(ReadAPITests.allKey))
        let session = String(cookie.split(separator: ";")[0])

        // Behind a TLS proxy the cookie is Secure.
        let behindTLS = try post("/console/sign-in", [("Origin", "https://\(host)"), ("X-Forwarded-Proto", "https")])
        #expect(behindTLS.header("Set-Cookie")?.contains("; Secure") == true)

        // The session opens pages, each with the policy; an open redirect is not possible.
        let client = try HTTPTestClient(port: serve.port, readTimeout: .seconds(30))
        defer { client.close() }
        let page = try client.request("GET", "/console/gates", headers: [("Cookie", session)])
        #expect(page.status == 200)
        let policy = page.header("Content-Security-Policy") ?? ""
        #expect(policy.contains("default-src 'self'") && policy.contains("script-src 'self'"), "\(policy)")
        #expect(!String(decoding: page.body, as: UTF8.self).contains(ReadAPITests.allKey))
        let away = try post(
            "/console/sign-in", [("Origin", "http://\(host)")],
            body: Array("key=\(ReadAPITests.allKey)&next=https%3A%2F%2Fevil.example%2F".utf8))
        #expect(away.header("Location") == "/console/")

        // Without a session a page sends to the form; signing out ends the session.
        let anonymous = try client.request("GET", "/console/gates", headers: [])
        #expect(anonymous.status == 303 && anonymous.header("Location")?.hasPrefix("/console/sign-in") == true)
        let signedOut = try post("/console/sign-out", [("Origin", "http://\(host)"), ("Cookie", session)], body: [])
        #expect(signedOut.status == 303 && signedOut.header("Set-Cookie")?.contains("Max-Age=0") == true)
        let after = try client.request("GET", "/console/gates", headers: [("Cookie", session)])
        #expect(after.status == 303)

        _ = serve.child.terminate(timeout: .seconds(20))
        #expect(!serve.child.errors.contains(ReadAPITests.allKey), "the key is in no log line")
        #expect(!serve.child.output.contains(ReadAPITests.allKey))
    }
}
