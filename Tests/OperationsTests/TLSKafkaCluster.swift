import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// librdkafka's mock cluster behind a TLS endpoint, with certificates made for the test: Kafka over TLS with
/// certificate verification on loopback, no broker installed.
///
/// The mock cluster advertises its brokers as `127.0.0.1:PORT`, the addresses it listens on, and clients re-connect
/// to whatever a broker advertises: a TLS proxy on another port would be left after the first metadata answer. So
/// the cluster (`flowmeter serve --kafka embedded`, which logs its bootstrap servers) runs in a network namespace
/// of its own (`unshare --net`, as root), where its ports are private, and each broker port is bridged into the
/// test's namespace on the *same* number:
///
///     client ──TLS──▶ 127.0.0.1:P (socat OPENSSL-LISTEN, test's namespace)
///            ──▶ DIR/bP.sock (a Unix socket: a file, seen from both namespaces)
///            ──▶ 127.0.0.1:P (socat UNIX-LISTEN → TCP, cluster's namespace) ──▶ mock broker
///
/// so every address the cluster advertises is a TLS endpoint whose certificate (for IP 127.0.0.1 and localhost) a
/// throwaway CA signed. Everything runs under `unshare --pid --fork --kill-child --mount-proc`: the script is the
/// first process of a PID namespace, and when the test's child (unshare) dies, even by SIGKILL, the kernel kills
/// every process in it, so no broker or socat outlives the test. `--mount-proc` gives the namespace a `/proc` of its
/// own: with the host's, a process there that reads `/proc/<its pid>/…` reads another process's files, or none (a
/// Swift runtime trap was seen so). The script prints `bootstrap: …` once each TLS port listens (the
/// event the fixture waits for), and exits when any bridge does, which the tests see as a failure.
final class TLSKafkaCluster: Sendable {
    /// The TLS bootstrap servers, `127.0.0.1:PORT` each.
    let bootstrapServers: [String]
    /// The CA that signed the brokers' certificate.
    let caPath: String
    /// A CA that signed nothing here: trusting it alone must fail verification.
    let otherCAPath: String
    /// A client certificate and its key, signed by the same CA, for mutual TLS.
    let clientCertificatePath: String
    let clientKeyPath: String
    /// The working directory (certificates, sockets, the cluster's log, one folder per attempt), removed with the
    /// fixture.
    let directory: TemporaryDirectory
    private let child: ChildProcess
    /// The attempt's folder: the script's logs.
    private let folder: String

    /// Makes the certificates, starts the cluster and its bridges, and waits (bounded) for the bootstrap line. With
    /// `requiresClientCertificate` the TLS endpoints accept only clients with a certificate the CA signed.
    ///
    /// A broker port of the cluster's namespace may be taken in the test's (by another test's connection): the
    /// script then exits with 75 before the bootstrap line, and a new cluster, with new ports, is tried, up to three.
    init(requiresClientCertificate: Bool = false) async throws {
        directory = try TemporaryDirectory(prefix: "flowmeter-kafka-tls")
        let executable = try FlowmeterExecutable.requiredPath()
        let verify = requiresClientCertificate ? "verify=1,cafile=ca.pem" : "verify=0"
        var attempt = 0
        while true {
            attempt += 1
            let folder = directory.file("attempt-\(attempt)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try Data(Self.outerScript.utf8).write(to: URL(fileURLWithPath: folder + "/outer.sh"))
            try Data(Self.innerScript.utf8).write(to: URL(fileURLWithPath: folder + "/inner.sh"))
            try Data(#"{"ingestKeys": [{"key": "k-cluster-only", "apps": ["*"]}]}"#.utf8)
                .write(to: URL(fileURLWithPath: folder + "/keys.json"))
            let child = try ChildProcess(
                "/usr/bin/unshare",
                [
                    "--pid", "--fork", "--kill-child", "--mount-proc", "/bin/bash", folder + "/outer.sh", folder,
                    executable, verify,
                ])
            var line: Substring?
            let started = await eventually {
                line = child.output.split(separator: "\n").first { $0.hasPrefix("bootstrap: ") }
                return line != nil || !child.isRunning
            }
            if started, let line {
                self.child = child
                self.folder = folder
                caPath = folder + "/ca.pem"
                otherCAPath = folder + "/other-ca.pem"
                clientCertificatePath = folder + "/client.pem"
                clientKeyPath = folder + "/client.key"
                bootstrapServers = line.dropFirst("bootstrap: ".count).split(separator: ",").map(String.init)
                return
            }
            child.signal(SIGKILL)
            let status = child.waitForExit(timeout: .seconds(10))
            if status == 75 && attempt < 3 { continue }
            let log = (try? String(contentsOfFile: folder + "/cluster.log", encoding: .utf8)) ?? ""
            directory.remove()
            throw ChildProcess.Failure(
                "the TLS cluster did not start: \(child.errors.suffix(2000)) cluster log: \(log.prefix(5000))")
        }
    }

    deinit {
        // unshare --fork ignores SIGTERM while it waits for its child: SIGKILL it, and the kernel ends the rest.
        child.signal(SIGKILL)
        _ = child.waitForExit(timeout: .seconds(10))
        directory.remove()
    }

    /// For a failure message: whether the cluster and its bridges still run, the script's errors, and the ends of the
    /// cluster's and the bridges' logs.
    var diagnostics: String {
        func tail(_ name: String) -> Substring {
            ((try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "").suffix(1500)
        }
        return
            "cluster running: \(isRunning); script: \(child.errors.suffix(1000)); cluster.log: \(tail("cluster.log")); "
            + "bridges.log: \(tail("bridges.log"))"
    }

    /// Whether the cluster and every bridge still run.
    var isRunning: Bool { child.isRunning }

    /// The `--kafka-option` arguments for TLS with verification against `ca`.
    func tlsArguments(trusting ca: String) -> [String] {
        ["--kafka-option", "security.protocol=SSL", "--kafka-option", "ssl.ca.location=\(ca)"]
    }

    // In the test's namespace: certificates, the namespaced cluster, then one TLS listener per broker port.
    private static let outerScript = #"""
        set -euo pipefail
        dir=$1
        flowmeter=$2
        verify=$3
        cd "$dir"
        quiet() { "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; }
        ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
        quiet openssl req -x509 "${ec[@]}" -days 2 -subj /CN=flowmeter-test-ca -keyout ca.key -out ca.pem
        quiet openssl req -x509 "${ec[@]}" -days 2 -subj /CN=other-ca -keyout other-ca.key -out other-ca.pem
        quiet openssl req "${ec[@]}" -subj /CN=localhost -keyout server.key -out server.csr
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext
        quiet openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext \
            -out server.pem
        quiet openssl req "${ec[@]}" -subj /CN=flowmeter-client -keyout client.key -out client.csr
        quiet openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem
        unshare --net /bin/bash inner.sh "$dir" "$flowmeter" &
        inner=$!
        until [ -s ports ]; do
            kill -0 "$inner" 2>/dev/null || { echo "the namespaced cluster exited" >&2; exit 1; }
            sleep 0.05
        done
        servers=$(cat ports)
        for address in ${servers//,/ }; do
            port=${address##*:}
            socat OPENSSL-LISTEN:"$port",bind=127.0.0.1,reuseaddr,fork,cert=server.pem,key=server.key,"$verify" \
                UNIX-CONNECT:"$dir/b$port.sock" 2>>bridges.log &
            bridge=$!
            until ss -Hltn "sport = :$port" | grep -q .; do
                kill -0 "$bridge" 2>/dev/null || { echo "no TLS listener on port $port" >&2; exit 75; }
                sleep 0.05
            done
        done
        echo "bootstrap: $servers"
        wait -n
        echo "a bridge or the cluster exited" >&2
        exit 1
        """#

    // In the cluster's own network namespace: loopback up, the embedded cluster, a Unix socket per broker port.
    private static let innerScript = #"""
        set -euo pipefail
        dir=$1
        flowmeter=$2
        cd "$dir"
        ip link set lo up
        "$flowmeter" serve --listen 127.0.0.1:8080 --kafka embedded --keys keys.json --spool none \
            --salt 00112233445566778899aabbccddeeff --log-level info > cluster.log 2>&1 &
        cluster=$!
        until grep -q bootstrap_servers cluster.log; do
            kill -0 "$cluster" 2>/dev/null || exit 1
            sleep 0.05
        done
        servers=$(grep -o '"bootstrap_servers":"[^"]*"' cluster.log | head -1 | cut -d'"' -f4)
        for address in ${servers//,/ }; do
            port=${address##*:}
            socat UNIX-LISTEN:"$dir/b$port.sock",fork TCP:127.0.0.1:"$port" 2>>bridges.log &
            until [ -S "$dir/b$port.sock" ]; do sleep 0.05; done
        done
        echo "$servers" > ports.tmp
        mv ports.tmp ports
        wait -n
        exit 1
        """#
}
