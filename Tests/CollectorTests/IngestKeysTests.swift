import Collector
import Foundation
import Testing

@Suite struct IngestKeysTests {
    static let file = """
        {"ingestKeys": [
           {"key": "shop-key-0123456789", "apps": ["com.example.shop"],
            "rateLimit": {"eventsPerSecond": 50, "burst": 200}},
           {"key": "fleet-key-0123456789", "apps": ["com.example.shop", "com.example.news"], "note": "ignored"},
           {"key": "any-app-key-0123456", "apps": ["*"]}
         ],
         "adminKeys": ["admin-key-0123456789"]}
        """

    func keys() throws -> IngestKeys {
        try IngestKeys(json: Data(Self.file.utf8))
    }

    @Test func aKeyForTheAppIsAuthorized() throws {
        let keys = try keys()
        guard case .ok(let key) = keys.authorize(token: "shop-key-0123456789", appID: "com.example.shop") else {
            Issue.record("expected .ok")
            return
        }
        #expect(key.rateLimit == TokenBucket.Limit(perSecond: 50, burst: 200))
        #expect(keys.authorize(token: "fleet-key-0123456789", appID: "com.example.news") != .unauthorized)
        #expect(keys.authorize(token: "any-app-key-0123456", appID: "org.other.app") != .unauthorized)
    }

    @Test func unknownMissingAndPrefixTokensAreUnauthorized() throws {
        let keys = try keys()
        #expect(keys.authorize(token: nil, appID: "com.example.shop") == .unauthorized)
        #expect(keys.authorize(token: "", appID: "com.example.shop") == .unauthorized)
        #expect(keys.authorize(token: "shop-key-012345678", appID: "com.example.shop") == .unauthorized)
        #expect(keys.authorize(token: "shop-key-01234567890", appID: "com.example.shop") == .unauthorized)
        // An admin key is not an ingest key.
        #expect(keys.authorize(token: "admin-key-0123456789", appID: "com.example.shop") == .unauthorized)
    }

    @Test func aKnownKeyForAnotherAppIsForbidden() throws {
        let keys = try keys()
        let shop = try #require(keys.key(for: "shop-key-0123456789"))
        #expect(
            keys.authorize(token: "shop-key-0123456789", appID: "com.example.news") == .forbidden(keyID: shop.keyID))
    }

    @Test func keyIDsAreShortDigestsNotKeys() throws {
        let keys = try keys()
        #expect(keys.keys.map(\.keyID).allSatisfy { $0.count == 8 && $0.allSatisfy(\.isHexDigit) })
        #expect(Set(keys.keys.map(\.keyID)).count == 3)
        for key in keys.keys {
            #expect(!"\(key)".contains("key-0123"))
            #expect(!String(reflecting: key).contains("key-0123"))
        }
    }

    @Test func adminKeysAreRecognised() throws {
        let keys = try keys()
        #expect(keys.isAdmin("admin-key-0123456789"))
        #expect(!keys.isAdmin("shop-key-0123456789"))
        #expect(!keys.isAdmin(nil))
        #expect(!keys.isAdmin("admin-key-012345678"))
    }

    @Test func bearerTokensAreParsedFromTheHeader() {
        #expect(IngestKeys.bearerToken(fromAuthorization: "Bearer abc") == "abc")
        #expect(IngestKeys.bearerToken(fromAuthorization: "bearer   abc ") == "abc")
        #expect(IngestKeys.bearerToken(fromAuthorization: "Basic abc") == nil)
        #expect(IngestKeys.bearerToken(fromAuthorization: "Bearer") == nil)
        #expect(IngestKeys.bearerToken(fromAuthorization: nil) == nil)
    }

    @Test(arguments: [
        ("{", ""),
        ("[]", ""),
        ("{}", "ingestKeys"),
        (#"{"ingestKeys": []}"#, "ingestKeys"),
        (#"{"ingestKeys": [{"apps": ["a"]}]}"#, "ingestKeys[0].key"),
        (#"{"ingestKeys": [{"key": "k1", "apps": "a"}]}"#, "ingestKeys[0].apps"),
        (#"{"ingestKeys": [{"key": "k1", "apps": []}]}"#, "ingestKeys[0].apps"),
        (#"{"ingestKeys": [{"key": "k1", "apps": ["a", " "]}]}"#, "ingestKeys[0].apps[1]"),
        (#"{"ingestKeys": [{"key": "", "apps": ["a"]}]}"#, "ingestKeys[0].key"),
        (#"{"ingestKeys": [{"key": "has space", "apps": ["a"]}]}"#, "ingestKeys[0].key"),
        (#"{"ingestKeys": [{"key": "k1", "apps": ["a"]}, {"key": "k1", "apps": ["b"]}]}"#, "ingestKeys[1].key"),
        (#"{"ingestKeys": [{"key": "k1", "apps": ["a"]}], "adminKeys": ["k1"]}"#, "adminKeys[0]"),
        (
            #"{"ingestKeys": [{"key": "k1", "apps": ["a"], "rateLimit": {"eventsPerSecond": 0}}]}"#,
            "ingestKeys[0].rateLimit.eventsPerSecond"
        ),
        (
            #"{"ingestKeys": [{"key": "k1", "apps": ["a"], "rateLimit": {"eventsPerSecond": 5, "burst": 0.5}}]}"#,
            "ingestKeys[0].rateLimit.burst"
        ),
    ])
    func badFilesSayWhereTheyAreWrong(json: String, path: String) {
        let error = #expect(throws: IngestKeys.FileError.self) { _ = try IngestKeys(json: Data(json.utf8)) }
        #expect(error?.path == path, "\(error.map { "\($0)" } ?? "no error")")
        // The message never repeats the key material.
        #expect(error.map { !"\($0)".contains("k1") } ?? true)
    }

    @Test func aMissingFileIsReported() {
        let url = URL(fileURLWithPath: "/nonexistent/flowmeter-keys.json")
        let error = #expect(throws: IngestKeys.FileError.self) { _ = try IngestKeys(contentsOf: url) }
        #expect(error?.description.contains("/nonexistent/flowmeter-keys.json") == true)
    }

    @Test func aMissingBurstDefaultsToOneSecondOfRate() throws {
        let json = #"{"ingestKeys": [{"key": "k1", "apps": ["a"], "rateLimit": {"eventsPerSecond": 20}}]}"#
        let keys = try IngestKeys(json: Data(json.utf8))
        #expect(keys.keys[0].rateLimit == TokenBucket.Limit(perSecond: 20, burst: 20))
        #expect(keys.keys[0].mayWrite("a") && !keys.keys[0].mayWrite("b"))
    }

    static let readFile = """
        {"ingestKeys": [{"key": "shop-key-0123456789", "apps": ["com.example.shop"]}],
         "readKeys": [{"key": "shop-reader-0123456789", "apps": ["com.example.shop"]},
                      {"key": "all-reader-0123456789", "apps": ["*"]}],
         "adminKeys": ["admin-key-0123456789"]}
        """

    @Test func readKeysReadTheirAppsAndWriteNothing() throws {
        let keys = try IngestKeys(json: Data(Self.readFile.utf8))
        let shop = keys.readAccess(token: "shop-reader-0123456789")
        #expect(shop.mayRead("com.example.shop"))
        #expect(!shop.mayRead("com.example.news"))
        #expect(shop.isAuthenticated)
        #expect(keys.readAccess(token: "all-reader-0123456789") == .all)
        #expect(keys.readAccess(token: "admin-key-0123456789") == .all)
        // An ingest key reads nothing; a read key writes nothing and is no admin key.
        #expect(keys.readAccess(token: "shop-key-0123456789") == .none)
        #expect(keys.readAccess(token: nil) == .none)
        #expect(keys.readAccess(token: "shop-reader-012345678") == .none)
        #expect(keys.authorize(token: "shop-reader-0123456789", appID: "com.example.shop") == .unauthorized)
        #expect(!keys.isAdmin("all-reader-0123456789"))
        // The description names the key by its ID, never the secret.
        if case .apps(_, let keyID) = shop {
            #expect(keyID.count == 8)
            #expect(!"\(shop)".contains("shop-reader"))
        } else {
            Issue.record("expected a read key's apps")
        }
    }

    @Test func readKeysAreValidatedLikeTheOthers() throws {
        func refusal(_ json: String) -> String? {
            do {
                _ = try IngestKeys(json: Data(json.utf8))
                return nil
            } catch {
                return error.description
            }
        }
        let ingest = #"{"ingestKeys": [{"key": "shop-key-0123456789", "apps": ["*"]}], "#
        #expect(
            refusal(ingest + #""readKeys": [{"key": "shop-key-0123456789", "apps": ["a"]}]}"#)
                == "keys file: readKeys[0].key: repeats the key at ingestKeys[0].key")
        #expect(
            refusal(ingest + #""readKeys": [{"key": "r-0123456789", "apps": []}]}"#)
                == #"keys file: readKeys[0].apps: must list at least one app ID or "*""#)
        #expect(
            refusal(ingest + #""readKeys": [{"apps": ["a"]}]}"#) == "keys file: readKeys[0].key: missing required field"
        )
        #expect(refusal(ingest + #""readKeys": {"key": "x"}}"#) == "keys file: readKeys: expected an array")
    }
}
