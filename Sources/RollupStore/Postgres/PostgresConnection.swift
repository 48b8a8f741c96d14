import CLibPQ
import Foundation

/// One libpq connection: the only owner of a `PGconn` handle.
///
/// Not thread-safe: the store keeps each connection behind a lock. Every statement goes out with binary parameters
/// and binary results, so no value is ever spliced into SQL text: through `PQsendQueryParams` (parsed and planned on
/// every call) until the same SQL text has run `preparesAfter` times (2 by default) on the connection, then as a named prepared
/// statement (``PreparedStatements``), parsed once per connection: the sink's bulk statements carry a thousand
/// parameters, and parsing them was most of the server's work.
// The store reaches a connection only through a lock (the writer's mutex or a reader checked out of the pool), so
// one thread uses it at a time, as libpq requires.
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private let responseTimeout: Duration
    private var prepared = PreparedStatements()
    /// How many runs of one SQL text go through `PQsendQueryParams` before it is prepared; nil: never (also once the
    /// server lost a prepared statement under the connection).
    private var preparesAfter: Int?

    /// Connects to `url` (a libpq connection URI or keyword string) with `timeouts` as defaults under the URL's own
    /// settings. The URL's password never appears in an error.
    init(url: String, timeouts: PostgresTimeouts = PostgresTimeouts(), preparesAfter: Int? = 2) throws {
        // expand_dbname: the URL's settings override the keywords before it; the merged `options` after it wins.
        var keywords = timeouts.connectionKeywords
        keywords.append(("dbname", url))
        keywords.append(("options", timeouts.serverOptions(mergedWith: Self.parameter("options", in: url))))
        let pointer = Self.withCStrings(keywords.map(\.0)) { names in
            Self.withCStrings(keywords.map(\.1)) { values in PQconnectdbParams(names, values, 1) }
        }
        guard let pointer else {
            throw RollupStoreError(.connectionFailed, "PQconnectdbParams returned no connection", isRetriable: true)
        }
        guard PQstatus(pointer) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(pointer))
            PQfinish(pointer)
            throw RollupStoreError(
                .connectionFailed,
                "Cannot connect to PostgreSQL at \(redactedStoreURL(url)): \(Self.trimmed(message))", isRetriable: true)
        }
        handle = pointer
        responseTimeout = timeouts.responseTimeout
        self.preparesAfter = preparesAfter
    }

    deinit { PQfinish(handle) }

    /// Reconnects when the server dropped the connection (or the client gave up on it), so the next call does not
    /// fail on a dead socket.
    func reconnectIfBroken() throws {
        guard PQstatus(handle) != CONNECTION_OK else { return }
        // A new session has none of the old one's prepared statements.
        prepared = PreparedStatements()
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw RollupStoreError(
                .connectionFailed, "Cannot reconnect to PostgreSQL: \(Self.trimmed(lastError))", isRetriable: true)
        }
    }

    /// Runs one statement with `parameters` ($1…$n) and returns its rows; waits at most the response timeout.
    @discardableResult
    func execute(
        _ sql: String, _ parameters: [SQLValue] = [], file: String = #fileID, line: UInt = #line
    ) throws -> PostgresResult {
        try reconnectIfBroken()
        let types = parameters.map(\.postgresTypeOID)
        let encoded = parameters.map(\.postgresBytes)
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        // libpq reads the parameter buffers only during the call; copy them into one allocation that outlives it.
        let total = encoded.reduce(0) { $0 + ($1?.count ?? 0) }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 1)
        defer { storage.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var offset = 0
        for bytes in encoded {
            guard let bytes else {
                pointers.append(nil)
                continue
            }
            let destination = storage.baseAddress! + offset
            bytes.withUnsafeBytes { source in
                if let base = source.baseAddress { destination.copyMemory(from: base, byteCount: source.count) }
            }
            pointers.append(UnsafePointer(destination.assumingMemoryBound(to: CChar.self)))
            offset += bytes.count
        }
        let sent: Int32
        if let name = try preparedName(sql, types: types, file: file, line: line) {
            sent = PQsendQueryPrepared(handle, name, Int32(parameters.count), pointers, lengths, formats, 1)
        } else {
            sent = PQsendQueryParams(handle, sql, Int32(parameters.count), types, pointers, lengths, formats, 1)
        }
        guard sent == 1 else { throw error(sqlState: nil, message: lastError, sql: sql, file: file, line: line) }
        let result = try awaitResult(sql: sql, file: file, line: line)
        do {
            return try check(result, sql: sql, file: file, line: line)
        } catch let failure as RollupStoreError where failure.message.hasPrefix("PostgreSQL 26000") {
            // The session lost its prepared statements under the connection (a pooler that switched server
            // connections between transactions): forget them and prepare nothing more on this connection; the
            // retriable error redoes the transaction unprepared.
            prepared = PreparedStatements()
            preparesAfter = nil
            throw RollupStoreError(.conflict, failure.message, isRetriable: true, file: file, line: line)
        }
    }

    /// The name of `sql`'s prepared statement, preparing it now when it has run `preparesAfter` times with
    /// parameters of `types`; nil to send it unprepared: before that, when a parameter is NULL (whose type the
    /// server would infer), when the types differ from the prepared ones, or when the connection holds its most.
    private func preparedName(_ sql: String, types: [Oid], file: String, line: UInt) throws -> String? {
        guard let preparesAfter else { return nil }
        switch prepared.decision(sql, types: types, after: preparesAfter) {
        case .unprepared:
            return nil
        case .prepared(let name):
            return name
        case .prepare(let name):
            guard PQsendPrepare(handle, name, sql, Int32(types.count), types) == 1 else {
                throw error(sqlState: nil, message: lastError, sql: sql, file: file, line: line)
            }
            let result = try awaitResult(sql: sql, file: file, line: line)
            _ = try check(result, sql: sql, file: file, line: line)
            prepared.add(sql, name: name, types: types)
            return name
        }
    }

    /// Waits for the answer to the query just sent, at most the response timeout; returns its first failed result,
    /// else its last. Past the timeout the connection is dropped (the next call makes it again) and the call throws
    /// ``RollupStoreError/Code/timedOut``.
    private func awaitResult(sql: String, file: String, line: UInt) throws -> OpaquePointer? {
        let deadline = ContinuousClock.now + responseTimeout
        var kept: OpaquePointer?
        while true {
            // Send what libpq still buffers, then wait until a whole result has arrived.
            while true {
                let flushed = PQflush(handle)
                if flushed <= 0 { break }
                guard wait(for: Int16(POLLOUT | POLLIN), until: deadline) else {
                    if let kept { PQclear(kept) }
                    throw abandon(sql: sql, file: file, line: line)
                }
                _ = PQconsumeInput(handle)
            }
            while PQisBusy(handle) != 0 {
                guard wait(for: Int16(POLLIN), until: deadline) else {
                    if let kept { PQclear(kept) }
                    throw abandon(sql: sql, file: file, line: line)
                }
                if PQconsumeInput(handle) == 0 { break }
            }
            guard let result = PQgetResult(handle) else { return kept }
            let status = PQresultStatus(result)
            if let previous = kept {
                let previousFailed = PQresultStatus(previous) == PGRES_FATAL_ERROR
                if previousFailed {
                    PQclear(result)
                    continue
                }
                PQclear(previous)
            }
            kept = result
            // A COPY waits for its data; there is no further result to collect until it is sent.
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT { return kept }
        }
    }

    /// Waits until the socket is ready for `events` or `deadline` passes; false on the deadline.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        let socket = PQsocket(handle)
        guard socket >= 0 else { return true }
        while true {
            let left = deadline - ContinuousClock.now
            if left <= .zero { return false }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let milliseconds = Int32(min(left / .milliseconds(1), 60_000).rounded(.up))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }
        }
    }

    /// Gives up on a connection whose server stopped answering: shuts its socket, so libpq marks it broken and the
    /// next call connects again (a server that is back starts from a fresh session; its old one is rolled back).
    private func abandon(sql: String, file: String, line: UInt) -> RollupStoreError {
        let socket = PQsocket(handle)
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
        _ = PQconsumeInput(handle)
        while PQstatus(handle) == CONNECTION_OK, PQisBusy(handle) == 0, let result = PQgetResult(handle) {
            PQclear(result)
        }
        return RollupStoreError(
            .timedOut,
            "PostgreSQL did not answer within \(responseTimeout) (in: \(sql.prefix(120))); the connection was dropped",
            isRetriable: true, file: file, line: line)
    }

    /// Runs `sql` (a `COPY … FROM STDIN`) and streams `data` in COPY text format.
    func copy(_ sql: String, data: [UInt8]) throws {
        _ = try check(PQexec(handle, sql), sql: sql, expectCopy: true)
        let chunk = 1 << 20
        var start = 0
        while start < data.count {
            let end = min(start + chunk, data.count)
            let code = data[start..<end].withUnsafeBytes { buffer in
                PQputCopyData(handle, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count))
            }
            guard code == 1 else { throw error(sqlState: nil, message: lastError, sql: sql) }
            start = end
        }
        guard PQputCopyEnd(handle, nil) == 1 else { throw error(sqlState: nil, message: lastError, sql: sql) }
        var failure: (any Error)?
        while let result = PQgetResult(handle) {
            do { _ = try check(result, sql: sql) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// Runs `body` in a transaction, rolling back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // The original error matters more than one from the rollback of an already failed transaction. A broken
            // connection has no transaction left to roll back (the server ends it with the session).
            if PQstatus(handle) == CONNECTION_OK { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    private var lastError: String { String(cString: PQerrorMessage(handle)) }

    private func check(
        _ result: OpaquePointer?, sql: String, expectCopy: Bool = false, file: String = #fileID, line: UInt = #line
    ) throws -> PostgresResult {
        guard let result else { throw error(sqlState: nil, message: lastError, sql: sql, file: file, line: line) }
        let wrapped = PostgresResult(handle: result)
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || (expectCopy && status == PGRES_COPY_IN) {
            return wrapped
        }
        let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        throw error(
            sqlState: sqlState, message: String(cString: PQresultErrorMessage(result)), sql: sql, file: file, line: line
        )
    }

    /// The one place libpq failures become store errors, classified by SQLSTATE: what fails every statement alike
    /// (read-only after a failover, permission denied, disk full, connection lost, shutdown) is store-wide; data
    /// exceptions and constraint violations blame the data; the rest is a failed query.
    private func error(
        sqlState: String?, message: String, sql: String, file: String = #fileID, line: UInt = #line
    ) -> RollupStoreError {
        let described = "PostgreSQL \(sqlState ?? "-"): \(Self.trimmed(message)) in: \(sql.prefix(120))"
        let (code, isRetriable) = Self.classify(sqlState: sqlState)
        return RollupStoreError(code, described, isRetriable: isRetriable, file: file, line: line)
    }

    /// The error code and retriability of a SQLSTATE (nil: no result at all, the connection failed underneath).
    static func classify(sqlState: String?) -> (RollupStoreError.Code, isRetriable: Bool) {
        guard let sqlState else { return (.connectionFailed, true) }
        switch sqlState {
        case "25006": return (.readOnly, true)
        case "42501": return (.permissionDenied, true)
        case "57014": return (.timedOut, true)  // query_canceled: statement_timeout
        case "25P03": return (.timedOut, true)  // idle_in_transaction_session_timeout
        case "55P03": return (.busy, true)
        default: break
        }
        switch sqlState.prefix(2) {
        case "08", "57": return (.connectionFailed, true)
        case "28": return (.permissionDenied, true)
        case "40": return (.conflict, true)
        case "53": return (.diskFull, true)
        case "58", "XX": return (.ioError, true)
        case "22", "23": return (.refused, false)
        default: return (.queryFailed, false)
        }
    }

    /// The value of one libpq setting in `url`, as libpq parses it; nil when absent or the URL does not parse.
    private static func parameter(_ keyword: String, in url: String) -> String? {
        guard let options = PQconninfoParse(url, nil) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// Calls `body` with a NULL-terminated array of C strings that live for the call.
    private static func withCStrings<T>(
        _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T
    ) -> T {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    private static func trimmed(_ message: String) -> String {
        message.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
