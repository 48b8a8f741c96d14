public import Foundation
import Hashing

/// The keys file: which bearer tokens may write which apps, at what rate, which may read which apps, and which are
/// admin keys.
///
/// ```json
/// {"ingestKeys": [{"key": "…", "apps": ["com.example.shop"], "rateLimit": {"eventsPerSecond": 500, "burst": 2000}}],
///  "readKeys": [{"key": "…", "apps": ["com.example.shop"]}],
///  "adminKeys": ["…"]}
/// ```
/// An ingest key writes diagnostics and reads nothing; a read key reads the apps it lists (the compatibility API, the
/// read API, the console) and writes nothing; an admin key writes deploys and manifests and reads every app.
/// `apps` may hold `"*"` for a key that may write (or read) every app; `rateLimit` is optional (the limiter's default then
/// applies); unknown fields are ignored. Keys are secrets: this type keeps only their SHA-256 digests, never logs or
/// prints them, and names each by `keyID`, the first 8 hex digits of its SHA-256, for logs and metrics. Lookups
/// compare the token's digest with every key's digest in constant time, so timing reveals neither which key
/// matched nor how much of a prefix did.
public struct IngestKeys: Sendable {
    /// One ingest key as configured, without the secret.
    public struct Key: Sendable, Hashable {
        /// The first 8 hex digits of the key's SHA-256: safe for logs and metric labels, useless for authenticating.
        public let keyID: String
        /// The app IDs the key may write; `"*"` means every app.
        public let apps: Set<String>
        /// The key's own rate limit, or nil for the limiter's default.
        public let rateLimit: TokenBucket.Limit?

        /// Whether this key may write `appID`.
        public func mayWrite(_ appID: String) -> Bool {
            apps.contains(appID) || apps.contains("*")
        }
    }

    /// What a bearer token may read: nothing, some apps (a read key), or every app (a read key for `"*"`, or an admin
    /// key).
    public enum ReadAccess: Sendable, Hashable {
        /// No token, or a token that is neither a read key nor an admin key (HTTP 401).
        case none
        /// A read key for these apps; `keyID` names it in logs, never the secret.
        case apps(Set<String>, keyID: String)
        /// An admin key, or a read key for `"*"`.
        case all

        /// Whether this access may read `appID`.
        public func mayRead(_ appID: String) -> Bool {
            switch self {
            case .none: false
            case .apps(let apps, _): apps.contains(appID)
            case .all: true
            }
        }

        /// Whether any app may be read at all (false answers 401; true but not for the asked app answers 403).
        public var isAuthenticated: Bool { self != .none }
    }

    /// The outcome of checking a request's bearer token against the app it writes.
    public enum Authorization: Sendable, Hashable {
        /// A known key that may write the app.
        case ok(Key)
        /// No token, or a token that is not an ingest key (HTTP 401).
        case unauthorized
        /// A known key that may not write this app (HTTP 403).
        case forbidden(keyID: String)
    }

    /// Why a keys file was refused: what is wrong and where, never the key material.
    public struct FileError: Error, Sendable, CustomStringConvertible {
        /// The JSON path of the problem, such as `ingestKeys[2].apps`, or empty for the whole file.
        public let path: String
        /// What is wrong there.
        public let reason: String
        /// The source file that made the error.
        public let file: String
        /// The source line that made the error.
        public let line: UInt

        init(_ path: String, _ reason: String, file: String = #fileID, line: UInt = #line) {
            self.path = path
            self.reason = reason
            self.file = file
            self.line = line
        }

        /// `keys file: <path>: <reason>`.
        public var description: String { "keys file: \(path.isEmpty ? "" : path + ": ")\(reason)" }
    }

    /// The ingest keys, in file order.
    public let keys: [Key]
    private let keyDigests: [[UInt8]]
    private let adminDigests: [[UInt8]]
    private let readDigests: [[UInt8]]
    private let readApps: [Set<String>]

    /// No keys at all: what a configuration holds when only its defaults are read (the CLI's help); a collector
    /// serving it would refuse every request.
    package static let none = IngestKeys()

    private init() {
        keys = []
        keyDigests = []
        adminDigests = []
        readDigests = []
        readApps = []
    }

    /// Reads and validates the keys file at `url`.
    public init(contentsOf url: URL) throws(FileError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw FileError("", "cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(json: data)
    }

    /// Parses and validates a keys file's JSON.
    ///
    /// Refused: invalid JSON, a missing or empty `ingestKeys`, an empty or whitespace-containing key, a key listed
    /// twice (as ingest, read or admin key), an entry without apps or with an empty app ID, and a non-positive rate.
    public init(json: Data) throws(FileError) {
        let file: KeysFile
        do {
            file = try JSONDecoder().decode(KeysFile.self, from: json)
        } catch let DecodingError.keyNotFound(key, context) {
            throw FileError(Self.path(context.codingPath + [key]), "missing required field")
        } catch let DecodingError.typeMismatch(type, context) {
            throw FileError(Self.path(context.codingPath), "expected \(Self.describe(type))")
        } catch let DecodingError.valueNotFound(type, context) {
            throw FileError(Self.path(context.codingPath), "expected \(Self.describe(type)), found null")
        } catch let DecodingError.dataCorrupted(context) {
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw FileError(Self.path(context.codingPath), "not valid JSON" + (underlying.map { ": \($0)" } ?? ""))
        } catch {
            throw FileError("", "not valid JSON")
        }

        guard !file.ingestKeys.isEmpty else { throw FileError("ingestKeys", "must list at least one key") }
        var seen: [[UInt8]: String] = [:]
        func checkSecret(_ secret: String, at path: String) throws(FileError) -> [UInt8] {
            guard !secret.isEmpty else { throw FileError(path, "must not be empty") }
            guard !secret.contains(where: { $0.isWhitespace }) else {
                throw FileError(path, "must not contain whitespace")
            }
            let digest = SHA256.digest(secret)
            if let earlier = seen[digest] { throw FileError(path, "repeats the key at \(earlier)") }
            seen[digest] = path
            return digest
        }

        func checkApps(_ apps: [String], at path: String) throws(FileError) {
            guard !apps.isEmpty else { throw FileError(path + ".apps", "must list at least one app ID or \"*\"") }
            if let empty = apps.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
                throw FileError(path + ".apps[\(empty)]", "must not be empty")
            }
        }

        var keys: [Key] = []
        var keyDigests: [[UInt8]] = []
        for (index, entry) in file.ingestKeys.enumerated() {
            let path = "ingestKeys[\(index)]"
            let digest = try checkSecret(entry.key, at: path + ".key")
            try checkApps(entry.apps, at: path)
            var limit: TokenBucket.Limit?
            if let rate = entry.rateLimit {
                guard rate.eventsPerSecond > 0, rate.eventsPerSecond.isFinite else {
                    throw FileError(path + ".rateLimit.eventsPerSecond", "must be a positive number")
                }
                let burst = rate.burst ?? rate.eventsPerSecond
                guard burst >= 1, burst.isFinite else {
                    throw FileError(path + ".rateLimit.burst", "must be at least 1")
                }
                limit = TokenBucket.Limit(perSecond: rate.eventsPerSecond, burst: burst)
            }
            keys.append(Key(keyID: Hex.encode(digest.prefix(4)), apps: Set(entry.apps), rateLimit: limit))
            keyDigests.append(digest)
        }
        var adminDigests: [[UInt8]] = []
        for (index, secret) in (file.adminKeys ?? []).enumerated() {
            adminDigests.append(try checkSecret(secret, at: "adminKeys[\(index)]"))
        }
        var readDigests: [[UInt8]] = []
        var readApps: [Set<String>] = []
        for (index, entry) in (file.readKeys ?? []).enumerated() {
            let path = "readKeys[\(index)]"
            readDigests.append(try checkSecret(entry.key, at: path + ".key"))
            try checkApps(entry.apps, at: path)
            readApps.append(Set(entry.apps))
        }
        self.keys = keys
        self.keyDigests = keyDigests
        self.adminDigests = adminDigests
        self.readDigests = readDigests
        self.readApps = readApps
    }

    /// What `token` (nil when the request had none) may read; takes the same time whichever key matches, or none.
    /// Ingest keys read nothing.
    public func readAccess(token: String?) -> ReadAccess {
        guard let token else { return .none }
        let digest = SHA256.digest(token)
        let admin = Self.constantTimeIndex(of: digest, in: adminDigests) != nil
        let reader = Self.constantTimeIndex(of: digest, in: readDigests)
        if admin { return .all }
        guard let reader else { return .none }
        let apps = readApps[reader]
        return apps.contains("*") ? .all : .apps(apps, keyID: Hex.encode(digest.prefix(4)))
    }

    /// The ingest key that `token` is, or nil; takes the same time whichever key matches, or none.
    public func key(for token: String) -> Key? {
        Self.constantTimeIndex(of: SHA256.digest(token), in: keyDigests).map { keys[$0] }
    }

    /// Whether `token` (nil when the request had none) may write `appID`.
    public func authorize(token: String?, appID: String) -> Authorization {
        guard let token, let key = key(for: token) else { return .unauthorized }
        return key.mayWrite(appID) ? .ok(key) : .forbidden(keyID: key.keyID)
    }

    /// Whether `token` is one of the admin keys, checked in constant time.
    public func isAdmin(_ token: String?) -> Bool {
        guard let token else { return false }
        return Self.constantTimeIndex(of: SHA256.digest(token), in: adminDigests) != nil
    }

    /// The token in an `Authorization: Bearer <token>` header value (scheme case-insensitive), or nil.
    public static func bearerToken(fromAuthorization header: String?) -> String? {
        guard let header else { return nil }
        if let token = plainBearerToken(header) { return token }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    // `Bearer <token>` with single spaces and a token of visible ASCII, the header every client sends: the same
    // answer as the general path, without Foundation's trimming. Nil sends anything else down the general path.
    private static func plainBearerToken(_ header: String) -> String? {
        let utf8 = header.utf8
        guard utf8.count > 7 else { return nil }
        var index = utf8.startIndex
        for expected in "bearer ".utf8 {
            let byte = utf8[index]
            guard byte == expected || (expected != UInt8(ascii: " ") && byte | 0x20 == expected) else { return nil }
            index = utf8.index(after: index)
        }
        for byte in utf8[index...] where byte <= 0x20 || byte >= 0x7F { return nil }
        return String(header[index...])
    }

    /// Compares against every digest without stopping early, so time does not depend on which one matches.
    private static func constantTimeIndex(of digest: [UInt8], in digests: [[UInt8]]) -> Int? {
        var match: Int?
        for (index, candidate) in digests.enumerated() where constantTimeEquals(digest, candidate) {
            match = index
        }
        return match
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type: "a number"
        case is [String].Type: "an array of strings"
        case is Array<Any>.Type, is [KeysFile.Entry].Type, is [KeysFile.ReadEntry].Type: "an array"
        default: "an object"
        }
    }

    private struct KeysFile: Decodable {
        struct Entry: Decodable {
            var key: String
            var apps: [String]
            var rateLimit: Rate?
        }

        struct ReadEntry: Decodable {
            var key: String
            var apps: [String]
        }

        struct Rate: Decodable {
            var eventsPerSecond: Double
            var burst: Double?
        }

        var ingestKeys: [Entry]
        var readKeys: [ReadEntry]?
        var adminKeys: [String]?
    }
}

extension IngestKeys.Key: CustomStringConvertible {
    /// `key <keyID>`; never the secret.
    public var description: String { "key \(keyID)" }
}
