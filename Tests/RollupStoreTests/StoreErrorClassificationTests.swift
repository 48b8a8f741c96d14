import Testing

@testable import RollupStore

/// Which store errors are the store's as a whole (the sink stalls and waits) and which blame one message's data
/// (the sink may dead-letter it): docs/reliability.md, C2.
@Suite struct StoreErrorClassificationTests {
    @Test(arguments: [
        ("25006", RollupStoreError.Code.readOnly), ("42501", .permissionDenied), ("28P01", .permissionDenied),
        ("53100", .diskFull), ("53200", .diskFull), ("08006", .connectionFailed), ("08001", .connectionFailed),
        ("57P01", .connectionFailed), ("57P03", .connectionFailed), ("57014", .timedOut), ("25P03", .timedOut),
        ("58030", .ioError), ("XX001", .ioError), ("55P03", .busy),
    ])
    func postgresFailuresOfTheWholeStoreAreStoreWide(_ sqlState: String, _ code: RollupStoreError.Code) {
        let (classified, isRetriable) = PostgresConnection.classify(sqlState: sqlState)
        #expect(classified == code)
        #expect(isRetriable)
        #expect(RollupStoreError(classified, "").isStoreWide)
        #expect(!RollupStoreError(classified, "").refusesData)
    }

    @Test func aLostConnectionWithoutAResultIsStoreWide() {
        let (code, _) = PostgresConnection.classify(sqlState: nil)
        #expect(RollupStoreError(code, "").isStoreWide)
    }

    @Test(arguments: ["23505", "23503", "22001", "22P02"])
    func postgresDataErrorsBlameTheData(_ sqlState: String) {
        let (code, isRetriable) = PostgresConnection.classify(sqlState: sqlState)
        #expect(code == .refused && !isRetriable)
        #expect(RollupStoreError(code, "").refusesData && !RollupStoreError(code, "").isStoreWide)
    }

    @Test func aSerializationConflictIsRetriedButNeitherStoreWideNorTheData() {
        let (code, isRetriable) = PostgresConnection.classify(sqlState: "40001")
        #expect(code == .conflict && isRetriable)
        #expect(!RollupStoreError(code, "").isStoreWide && !RollupStoreError(code, "").refusesData)
    }

    // SQLite's result codes (sqlite3.h): IOERR_WRITE 778, FULL 13, READONLY 8, CANTOPEN 14, CORRUPT 11, NOTADB 26,
    // BUSY 5, PERM 3.
    @Test(arguments: [
        (Int32(778), RollupStoreError.Code.ioError), (13, .diskFull), (8, .readOnly), (14, .ioError), (11, .corrupt),
        (26, .corrupt), (5, .busy), (3, .permissionDenied),
    ])
    func sqliteFailuresOfTheFileAreStoreWide(_ result: Int32, _ code: RollupStoreError.Code) {
        let error = SQLiteConnection.error(code: result, message: "m")
        #expect(error.code == code)
        #expect(error.isStoreWide && !error.refusesData)
    }

    @Test func sqliteConstraintErrorsBlameTheData() {
        // 787: SQLITE_CONSTRAINT_FOREIGNKEY.
        let error = SQLiteConnection.error(code: 787, message: "FOREIGN KEY constraint failed")
        #expect(error.refusesData && !error.isStoreWide)
    }

    @Test(arguments: [
        ("postgres://flowmeter:s3cret@db:5432/rollups", "postgres://flowmeter:***@db:5432/rollups"),
        ("postgresql://u:p%40ss@h/d?sslmode=verify-full", "postgresql://u:***@h/d?sslmode=verify-full"),
        ("postgresql://u@h/d?password=s3cret&sslmode=require", "postgresql://u@h/d?password=***&sslmode=require"),
        ("host=db user=u password=s3cret dbname=d", "host=db user=u password=*** dbname=d"),
        ("host=db password='s3 cret' dbname=d", "host=db password=*** dbname=d"),
        ("postgresql://u@h/d", "postgresql://u@h/d"),
        ("/var/lib/flowmeter/rollups.sqlite", "/var/lib/flowmeter/rollups.sqlite"),
    ])
    func aStoreURLIsPrintedWithoutItsPassword(_ url: String, _ printed: String) {
        #expect(redactedStoreURL(url) == printed)
    }

    @Test func theTimeoutsBecomeLibpqDefaultsThatTheURLOverrides() {
        var timeouts = PostgresTimeouts()
        timeouts.statement = .seconds(5)
        let keywords = Dictionary(uniqueKeysWithValues: timeouts.connectionKeywords)
        #expect(keywords["connect_timeout"] == "10" && keywords["keepalives"] == "1")
        #expect(keywords["keepalives_idle"] == "30" && keywords["tcp_user_timeout"] == "60000")
        #expect(
            timeouts.serverOptions(mergedWith: nil)
                == "-c statement_timeout=5000 -c idle_in_transaction_session_timeout=60000")
        // A URL's own statement_timeout wins; the rest of ours stays.
        #expect(
            timeouts.serverOptions(mergedWith: "-c statement_timeout=1s")
                == "-c idle_in_transaction_session_timeout=60000 -c statement_timeout=1s")
    }
}
