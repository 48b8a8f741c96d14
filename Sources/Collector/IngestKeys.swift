public import Foundation
import Hashing

/// The keys file (CONTRACT §5): which bearer tokens may write which apps, at what rate, and which are admin keys.
///
/// ```json
/// {"ingestKeys": [{"key": "…", "apps": ["com.example.shop"], "rateLimit": {"eventsPerSecond": 500, "burst": 2000}}],
///  "adminKeys": ["…"]}
/// ```
/// `apps` may hold `"*"` for a key that may write every app; `rateLimit` is optional (the limiter's default then
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
    /// twice (as ingest or admin key), an entry without apps or with an empty app ID, and a non-positive rate.
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

        var keys: [Key] = []
        var keyDigests: [[UInt8]] = []
        for (index, entry) in file.ingestKeys.enumerated() {
            let path = "ingestKeys[\(index)]"
            let digest = try checkSecret(entry.key, at: path + ".key")
            guard !entry.apps.isEmpty else { throw FileError(path + ".apps", "must list at least one app ID or \"*\"") }
            if let empty = entry.apps.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
                throw FileError(path + ".apps[\(empty)]", "must not be empty")
            }
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
        self.keys = keys
        self.keyDigests = keyDigests
        self.adminDigests = adminDigests
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
        case is Array<Any>.Type, is [KeysFile.Entry].Type: "an array"
        default: "an object"
        }
    }

    private struct KeysFile: Decodable {
        struct Entry: Decodable {
            var key: String
            var apps: [String]
            var rateLimit: Rate?
        }

        struct Rate: Decodable {
            var eventsPerSecond: Double
            var burst: Double?
        }

        var ingestKeys: [Entry]
        var adminKeys: [String]?
    }
}

extension IngestKeys.Key: CustomStringConvertible {
    /// `key <keyID>`; never the secret.
    public var description: String { "key \(keyID)" }
}
