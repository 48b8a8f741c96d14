import CLibPQ
import Foundation

/// One libpq connection: the only owner of a `PGconn` handle.
///
/// Not thread-safe: the store keeps each connection behind a lock. Every statement goes through `PQexecParams` with
/// binary parameters and binary results, so no value is ever spliced into SQL text.
// The store reaches a connection only through a lock (the writer's mutex or a reader checked out of the pool), so
// one thread uses it at a time, as libpq requires.
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer

    /// Connects to `url` (a libpq connection URI or keyword string).
    init(url: String) throws {
        guard let pointer = PQconnectdb(url) else {
            throw RollupStoreError(.connectionFailed, "PQconnectdb returned no connection", isRetriable: true)
        }
        guard PQstatus(pointer) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(pointer))
            PQfinish(pointer)
            throw RollupStoreError(
                .connectionFailed, "Cannot connect to PostgreSQL: \(Self.trimmed(message))", isRetriable: true)
        }
        handle = pointer
    }

    deinit { PQfinish(handle) }

    /// Reconnects when the server dropped the connection, so the next call does not fail on a dead socket.
    func reconnectIfBroken() throws {
        guard PQstatus(handle) != CONNECTION_OK else { return }
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw RollupStoreError(
                .connectionFailed, "Cannot reconnect to PostgreSQL: \(Self.trimmed(lastError))", isRetriable: true)
        }
    }

    /// Runs one statement with `parameters` ($1…$n) and returns its rows.
    @discardableResult
    func execute(
        _ sql: String, _ parameters: [SQLValue] = [], file: String = #fileID, line: UInt = #line
    ) throws -> PostgresResult {
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
        let result = PQexecParams(handle, sql, Int32(parameters.count), types, pointers, lengths, formats, 1)
        return try check(result, sql: sql, file: file, line: line)
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
            // The original error matters more than one from the rollback of an already failed transaction.
            _ = try? execute("ROLLBACK")
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

    /// The one place libpq failures become store errors, classified by SQLSTATE class.
    private func error(
        sqlState: String?, message: String, sql: String, file: String = #fileID, line: UInt = #line
    ) -> RollupStoreError {
        let described = "PostgreSQL \(sqlState ?? "-"): \(Self.trimmed(message)) in: \(sql.prefix(120))"
        guard let sqlState else {
            // No result at all: the connection failed underneath the statement.
            return RollupStoreError(.connectionFailed, described, isRetriable: true, file: file, line: line)
        }
        switch sqlState.prefix(2) {
        case "08", "57":
            return RollupStoreError(.connectionFailed, described, isRetriable: true, file: file, line: line)
        case "40":
            return RollupStoreError(.conflict, described, isRetriable: true, file: file, line: line)
        case "53", "58":
            return RollupStoreError(.ioError, described, isRetriable: true, file: file, line: line)
        case "55" where sqlState == "55P03":
            return RollupStoreError(.busy, described, isRetriable: true, file: file, line: line)
        default:
            return RollupStoreError(.queryFailed, described, file: file, line: line)
        }
    }

    private static func trimmed(_ message: String) -> String {
        message.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
