import Hashing
import Testing

@Suite struct HMACSHA256Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: [UInt8]
        let data: [UInt8]
        let expectedHex: String
        var testDescription: String { name }
    }

    /// RFC 4231 §4.2–4.8. Case 5 publishes only the first 128 bits of its code.
    static let rfc4231: [Vector] = [
        Vector(
            name: "case 1", key: Array(repeating: 0x0B, count: 20), data: Array("Hi There".utf8),
            expectedHex: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(
            name: "case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            expectedHex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(
            name: "case 3", key: Array(repeating: 0xAA, count: 20), data: Array(repeating: 0xDD, count: 50),
            expectedHex: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(
            name: "case 4", key: Array(1...25), data: Array(repeating: 0xCD, count: 50),
            expectedHex: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(
            name: "case 5 (truncated)", key: Array(repeating: 0x0C, count: 20),
            data: Array("Test With Truncation".utf8), expectedHex: "a3b6167473100ee06e0c796c2955552b"),
        Vector(
            name: "case 6", key: Array(repeating: 0xAA, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            expectedHex: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(
            name: "case 7", key: Array(repeating: 0xAA, count: 131),
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. "
                    + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
            expectedHex: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: rfc4231)
    func matchesRFC4231(vector: Vector) {
        let code = HMACSHA256.authenticationCode(for: vector.data, key: vector.key)
        #expect(code.count == HMACSHA256.byteCount)
        #expect(Hex.encode(code).hasPrefix(vector.expectedHex))
    }

    /// The keyed form (the key's padded blocks hashed once) gives the RFC's codes, called again and again and from
    /// several threads at once.
    @Test(arguments: rfc4231)
    func theKeyedFormMatchesRFC4231(vector: Vector) async {
        let mac = KeyedHMACSHA256(key: vector.key)
        let codes = await withTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<8 {
                group.addTask { vector.data.withUnsafeBytes { mac.authenticationCode(for: $0) } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(codes.count == 8)
        #expect(codes.allSatisfy { Hex.encode($0).hasPrefix(vector.expectedHex) })
    }

    /// Against the one-shot form: keys of every length around the 64-byte block (and empty), messages of every
    /// length around it (and empty), as bytes and as strings.
    @Test func theKeyedFormAgreesWithTheOneShotForm() {
        for keyLength in [0, 1, 20, 63, 64, 65, 131] {
            let key = (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let mac = KeyedHMACSHA256(key: key)
            for messageLength in [0, 1, 36, 55, 56, 63, 64, 65, 200] {
                let message = (0..<messageLength).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 7) }
                #expect(
                    message.withUnsafeBytes { mac.authenticationCode(for: $0) }
                        == HMACSHA256.authenticationCode(for: message, key: key),
                    "key \(keyLength), message \(messageLength)")
            }
            #expect(mac.authenticationCode(for: "héllo") == HMACSHA256.authenticationCode(for: "héllo", key: key))
        }
    }

    @Test func stringAndByteMessagesAgree() {
        let key = Array("k".utf8)
        #expect(
            HMACSHA256.authenticationCode(for: "héllo", key: key)
                == HMACSHA256.authenticationCode(for: Array("héllo".utf8), key: key))
        #expect(HMACSHA256.authenticationCode(for: "", key: key).count == 32)
    }

    @Test func sha256MatchesKnownDigests() {
        #expect(Hex.encode(SHA256.digest("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Hex.encode(SHA256.digest([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}

@Suite struct InstallIDHasherTests {
    let installID = "3F2A9C1E-6B7D-4E8F-9A0B-1C2D3E4F5A6B"

    @Test func theSameIDGivesTheSamePseudonym() {
        let hasher = InstallIDHasher(salt: Array("salt-one-sixteen".utf8))
        let again = InstallIDHasher(salt: Array("salt-one-sixteen".utf8))
        #expect(hasher.pseudonym(for: installID) == again.pseudonym(for: installID))
    }

    @Test func thePseudonymIsTheTruncatedHMACInLowercaseHex() {
        let salt = Array("salt-one-sixteen".utf8)
        let pseudonym = InstallIDHasher(salt: salt).pseudonym(for: installID)
        #expect(pseudonym.count == InstallIDHasher.pseudonymLength)
        #expect(pseudonym.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(pseudonym == String(Hex.encode(HMACSHA256.authenticationCode(for: installID, key: salt)).prefix(32)))
        #expect(!pseudonym.uppercased().contains(installID.prefix(8)))
    }

    @Test func aDifferentSaltChangesThePseudonym() {
        let first = InstallIDHasher(salt: Array("salt-one-sixteen".utf8))
        let second = InstallIDHasher(salt: Array("salt-two-sixteen".utf8))
        #expect(first.pseudonym(for: installID) != second.pseudonym(for: installID))
    }

    @Test func differentIDsGetDifferentPseudonyms() {
        let hasher = InstallIDHasher(salt: Array(repeating: 1, count: 16))
        let pseudonyms = Set((0..<10_000).map { hasher.pseudonym(for: "install-\($0)") })
        #expect(pseudonyms.count == 10_000)
    }

    @Test func hexSaltIsTheSameAsItsBytes() throws {
        let fromHex = try InstallIDHasher(hexSalt: "00ff10AB")
        let fromBytes = InstallIDHasher(salt: [0x00, 0xFF, 0x10, 0xAB])
        #expect(fromHex.pseudonym(for: installID) == fromBytes.pseudonym(for: installID))
    }

    @Test(arguments: ["", "abc", "zz", "0g"])
    func invalidHexSaltsAreRejected(text: String) {
        let error = #expect(throws: HashingError.self) { _ = try InstallIDHasher(hexSalt: text) }
        #expect(error?.code == .invalidSalt)
    }
}

@Suite struct ConstantTimeTests {
    @Test func equalBytesAreEqual() {
        #expect(constantTimeEquals(Array("secret-key".utf8), Array("secret-key".utf8)))
        #expect(constantTimeEquals([], []))
    }

    @Test func anyDifferenceIsUnequal() {
        let key = Array("secret-key-0123456789".utf8)
        for index in key.indices {
            var changed = key
            changed[index] ^= 0x01
            #expect(!constantTimeEquals(key, changed), "byte \(index)")
        }
        #expect(!constantTimeEquals(key, Array(key.dropLast())))
        #expect(!constantTimeEquals(key, key + [0]))
        #expect(!constantTimeEquals([], [0]))
    }

    @Test func randomBytesAreFreshEachTime() throws {
        let first = try randomBytes(count: 32)
        let second = try randomBytes(count: 32)
        #expect(first.count == 32)
        #expect(first != second)
        #expect(try randomBytes(count: 0).isEmpty)
    }

    @Test func hexRoundTrips() {
        let bytes: [UInt8] = Array(0...255)
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(Hex.encode([0xAB, 0x01]) == "ab01")
    }
}
