import Foundation
import TestSupport
import Testing

@testable import RollupStore

/// A PostgreSQL store's connections carry the documented timeouts, and a store URL's own settings win over them
/// (docs/sink.md, "PostgreSQL connections").
@Suite struct PostgresConnectionSettingsTests {
    @Test func everyConnectionHasTheDefaultTimeouts() throws {
        let url = try PostgresServer.shared().makeDatabase(prefix: "settings")
        let connection = try PostgresConnection(url: url)
        #expect(try Self.show("statement_timeout", on: connection) == "30s")
        #expect(try Self.show("idle_in_transaction_session_timeout", on: connection) == "1min")
        #expect(try Self.show("application_name", on: connection) == "flowmeter")
        #expect(try Self.show("tcp_keepalives_idle", on: connection) != nil)
    }

    @Test func theURLsOwnSettingsWin() throws {
        let url = try PostgresServer.shared().makeDatabase(prefix: "settings")
        let given = url + "?application_name=sink-a&options=-c%20statement_timeout%3D5s"
        let connection = try PostgresConnection(url: given)
        #expect(try Self.show("statement_timeout", on: connection) == "5s")
        // The rest of the defaults stay.
        #expect(try Self.show("idle_in_transaction_session_timeout", on: connection) == "1min")
        #expect(try Self.show("application_name", on: connection) == "sink-a")
    }

    private static func show(_ setting: String, on connection: PostgresConnection) throws -> String? {
        let result = try connection.execute("SELECT CAST(current_setting($1) AS TEXT)", [.text(setting)])
        return result.count == 1 ? try result.text(0, 0) : nil
    }
}
