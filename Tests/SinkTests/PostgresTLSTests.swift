import Foundation
import RollupStore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/reliability.md C5, PostgreSQL: a store URL with `sslmode=verify-full` connects to a server whose certificate
/// its CA signed for the host name used, and fails clearly with the wrong CA or the wrong host name. The CA and the
/// server's certificate are made here with openssl, for `localhost`.
@Suite struct PostgresTLSTests {
    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "openssl missing"))
    func c5VerifyFullConnectsWithTheRightCAAndHostAndFailsClearlyOtherwise() async throws {
        let postgres = try PrivatePostgres()
        let database = "tls_\(UUID().uuidString.prefix(8).lowercased())"
        try await postgres.psql("CREATE DATABASE \(database)")
        let certificates = try TemporaryDirectory(prefix: "flowmeter-pg-tls")
        defer { certificates.remove() }
        try await Self.makeCertificates(in: certificates)
        let base = "postgresql://postgres@localhost:\(postgres.port)/\(database)?connect_timeout=10"
        let good = "\(base)&sslmode=verify-full&sslrootcert=\(certificates.file("ca.crt"))"

        // Without TLS on the server, verify-full refuses to go on in plain text.
        #expect(throws: RollupStoreError.self) { try openRollupStore(url: good) }

        try await postgres.psql("ALTER SYSTEM SET ssl_cert_file = '\(certificates.file("server.crt"))'")
        try await postgres.psql("ALTER SYSTEM SET ssl_key_file = '\(certificates.file("server.key"))'")
        try await postgres.psql("ALTER SYSTEM SET ssl = on")
        try await postgres.psql("SELECT pg_reload_conf()")
        #expect(await eventually { (try? openRollupStore(url: good)) != nil })
        let store = try openRollupStore(url: good)
        _ = try store.freshness()

        let wrongCA = "\(base)&sslmode=verify-full&sslrootcert=\(certificates.file("other-ca.crt"))"
        let caError = try #require(Self.openingError(wrongCA))
        #expect(caError.code == .connectionFailed)
        #expect(caError.message.contains("certificate verify failed"), "\(caError.message)")

        let wrongHost = good.replacingOccurrences(of: "@localhost:", with: "@127.0.0.1:")
        let hostError = try #require(Self.openingError(wrongHost))
        #expect(hostError.message.contains("does not match host name"), "\(hostError.message)")
    }

    private static func openingError(_ url: String) -> RollupStoreError? {
        do {
            _ = try openRollupStore(url: url)
            return nil
        } catch {
            return error as? RollupStoreError
        }
    }

    /// A CA, a server certificate it signs for `localhost` (key readable by the server's user only), and a second,
    /// unrelated CA.
    private static func makeCertificates(in directory: TemporaryDirectory) async throws {
        func openssl(_ arguments: [String]) async throws {
            let result = try await ChildProcess.run("/usr/bin/openssl", arguments, timeout: .seconds(60))
            guard result.status == 0 else { throw ChildProcess.Failure("openssl \(arguments[0]): \(result.errors)") }
        }
        for ca in ["ca", "other-ca"] {
            try await openssl([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=flowmeter test \(ca)",
                "-keyout", directory.file("\(ca).key"), "-out", directory.file("\(ca).crt"),
            ])
        }
        try await openssl([
            "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", directory.file("server.key"),
            "-out", directory.file("server.csr"),
        ])
        try "subjectAltName=DNS:localhost\n".write(toFile: directory.file("san.ext"), atomically: true, encoding: .utf8)
        try await openssl([
            "x509", "-req", "-in", directory.file("server.csr"), "-CA", directory.file("ca.crt"), "-CAkey",
            directory.file("ca.key"), "-CAcreateserial", "-days", "2", "-extfile", directory.file("san.ext"), "-out",
            directory.file("server.crt"),
        ])
        // The server refuses a key others may read; as root, hand the files to the server's user.
        chmod(directory.file("server.key"), 0o600)
        if getuid() == 0, let user = getpwnam("postgres") {
            for name in ["", "server.key", "server.crt"] {
                chown(name.isEmpty ? directory.path : directory.file(name), user.pointee.pw_uid, user.pointee.pw_gid)
            }
        }
        chmod(directory.path, 0o755)
    }
}
