import Foundation

extension CapabilityManifest {
    /// Decodes and validates a manifest from JSON (a `POST /v1/manifests` body, a file, a `flowmeter.manifests.v1`
    /// value or a stored row).
    ///
    /// Unknown keys are ignored. Throws ``ManifestError``: `tooLarge` when the document or one of its lists is over
    /// `limits`, `invalid` (with the field's path) for anything else that is wrong.
    ///
    /// - Parameter checkingIdentifiers: hold every name to ``IdentifierRule`` and the name lengths of `limits` (the
    ///   default, for what arrives from outside); false reads a manifest as it was stored, trusting the writer's
    ///   check of its names.
    public init(
        jsonBytes bytes: some Collection<UInt8>, limits: ManifestLimits = ManifestLimits(),
        checkingIdentifiers: Bool = true
    ) throws(ManifestError) {
        guard bytes.count <= limits.maxBytes else {
            throw ManifestError(
                .tooLarge, "The manifest is \(bytes.count) bytes; the limit is \(limits.maxBytes) bytes")
        }
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            throw ManifestError(.invalid, "The manifest is not valid JSON")
        }
        guard let object = document as? [String: Any] else {
            throw ManifestError(.invalid, "A manifest is a JSON object")
        }
        var reader = ManifestReader(limits: limits, checksIdentifiers: checkingIdentifiers)
        self = try reader.manifest(from: object)
    }

    /// This manifest checked against `limits` and the identifier rule, as ``init(jsonBytes:limits:checkingIdentifiers:)``
    /// would check its JSON; throws the first problem.
    public func validated(limits: ManifestLimits = ManifestLimits()) throws(ManifestError) -> CapabilityManifest {
        try CapabilityManifest(jsonBytes: jsonBytes(), limits: limits)
    }

    /// The manifest as JSON, keys sorted and absent optionals left out: what is stored, published and listed.
    public func jsonBytes() -> [UInt8] {
        var object: [String: Any] = [
            "appID": appID, "appVersion": appVersion, "platform": platform,
            "types": types.mapValues { ["required": $0.required, "optional": $0.optional] },
        ]
        if let build { object["build"] = build }
        if let arrangements { object["arrangements"] = arrangements }
        if let uploadedAt { object["uploadedAt"] = uploadedAt.rfc3339String }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return [UInt8](data)
    }
}

/// Reads one manifest object field by field, keeping the path for errors and counting against the limits.
private struct ManifestReader {
    let limits: ManifestLimits
    let checksIdentifiers: Bool
    var keyCount = 0

    init(limits: ManifestLimits, checksIdentifiers: Bool) {
        self.limits = limits
        self.checksIdentifiers = checksIdentifiers
    }

    mutating func manifest(from object: [String: Any]) throws(ManifestError) -> CapabilityManifest {
        let appID = try requiredField("appID", in: object)
        let appVersion = try requiredField("appVersion", in: object)
        let platform = try requiredField("platform", in: object)
        let build = try optionalField("build", in: object)
        guard let typesValue = object["types"], !(typesValue is NSNull) else {
            throw ManifestError(.invalid, "Missing key 'types'", path: "types")
        }
        guard let typesObject = typesValue as? [String: Any] else {
            throw ManifestError(.invalid, "Expected an object of widget types for 'types'", path: "types")
        }
        guard typesObject.count <= limits.maxTypes else {
            throw ManifestError(
                .tooLarge, "The manifest lists \(typesObject.count) widget types; the limit is \(limits.maxTypes)",
                path: "types")
        }
        var types: [String: CapabilityManifest.TypeShape] = [:]
        for name in typesObject.keys.sorted() {
            let path = "types.\(name)"
            try check(name, as: "widget type", maxLength: limits.maxNameLength, path: path)
            types[name] = try shape(typesObject[name]!, path: path)
        }
        var arrangements: [String]?
        if let value = object["arrangements"], !(value is NSNull) {
            guard let list = value as? [Any] else {
                throw ManifestError(.invalid, "Expected an array of names for 'arrangements'", path: "arrangements")
            }
            guard list.count <= limits.maxArrangements else {
                throw ManifestError(
                    .tooLarge,
                    "The manifest lists \(list.count) arrangements; the limit is \(limits.maxArrangements)",
                    path: "arrangements")
            }
            arrangements = try list.enumerated().map { (index, element) throws(ManifestError) in
                let path = "arrangements.Index \(index)"
                guard let name = element as? String else {
                    throw ManifestError(.invalid, "Expected a string arrangement name", path: path)
                }
                try check(name, as: "arrangement", maxLength: limits.maxNameLength, path: path)
                return name
            }
        }
        var uploadedAt: Timestamp?
        if let value = object["uploadedAt"], !(value is NSNull) {
            guard let text = value as? String, let time = Timestamp(rfc3339: text) else {
                throw ManifestError(.invalid, "Expected an RFC 3339 time for 'uploadedAt'", path: "uploadedAt")
            }
            uploadedAt = time
        }
        return CapabilityManifest(
            appID: appID, appVersion: appVersion, platform: platform, build: build, types: types,
            arrangements: arrangements, uploadedAt: uploadedAt)
    }

    private mutating func shape(_ value: Any, path: String) throws(ManifestError) -> CapabilityManifest.TypeShape {
        guard let object = value as? [String: Any] else {
            throw ManifestError(.invalid, "Expected an object with 'required' and 'optional' keys", path: path)
        }
        let required = try keys("required", in: object, path: path)
        let optional = try keys("optional", in: object, path: path)
        let count = required.count + optional.count
        guard count <= limits.maxKeysPerType else {
            throw ManifestError(
                .tooLarge, "The type lists \(count) keys; the limit is \(limits.maxKeysPerType) per type", path: path)
        }
        keyCount += count
        guard keyCount <= limits.maxKeys else {
            throw ManifestError(
                .tooLarge, "The manifest lists more than \(limits.maxKeys) keys over all types", path: path)
        }
        if let both = Set(required).intersection(optional).sorted().first {
            throw ManifestError(.invalid, "Key '\(both)' is both required and optional", path: path)
        }
        return CapabilityManifest.TypeShape(required: required, optional: optional)
    }

    private func keys(_ name: String, in object: [String: Any], path: String) throws(ManifestError) -> [String] {
        guard let value = object[name], !(value is NSNull) else { return [] }
        guard let list = value as? [Any] else {
            throw ManifestError(.invalid, "Expected an array of keys for '\(name)'", path: "\(path).\(name)")
        }
        guard list.count <= limits.maxKeysPerType else {
            throw ManifestError(
                .tooLarge, "The type lists \(list.count) keys; the limit is \(limits.maxKeysPerType) per type",
                path: "\(path).\(name)")
        }
        return try list.enumerated().map { (index, element) throws(ManifestError) in
            let keyPath = "\(path).\(name).Index \(index)"
            guard let key = element as? String else {
                throw ManifestError(.invalid, "Expected a string key", path: keyPath)
            }
            try check(key, as: "key", maxLength: limits.maxFieldLength, path: keyPath)
            if let problem = ManifestKeyPath.problem(in: key) {
                throw ManifestError(.invalid, "Key '\(key)' \(problem)", path: keyPath)
            }
            let depth = key.split(separator: ".", omittingEmptySubsequences: false).count
            guard depth <= limits.maxKeyDepth else {
                throw ManifestError(
                    .tooLarge, "Key '\(key)' nests \(depth) levels; the limit is \(limits.maxKeyDepth)", path: keyPath)
            }
            return key
        }
    }

    private func requiredField(_ key: String, in object: [String: Any]) throws(ManifestError) -> String {
        guard let value = object[key], !(value is NSNull) else {
            throw ManifestError(.invalid, "Missing key '\(key)'", path: key)
        }
        guard let text = value as? String else {
            throw ManifestError(.invalid, "Expected a string for '\(key)'", path: key)
        }
        try check(text, as: key, maxLength: limits.maxFieldLength, path: key)
        return text
    }

    private func optionalField(_ key: String, in object: [String: Any]) throws(ManifestError) -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else {
            throw ManifestError(.invalid, "Expected a string for '\(key)'", path: key)
        }
        try check(text, as: key, maxLength: limits.maxFieldLength, path: key)
        return text
    }

    /// An identifier no longer than `maxLength` characters.
    private func check(_ value: String, as what: String, maxLength: Int, path: String) throws(ManifestError) {
        guard checksIdentifiers else { return }
        if let violation = IdentifierRule.violation(in: value) {
            throw ManifestError(.invalid, violation.message(key: what), path: path)
        }
        guard value.count <= maxLength else {
            throw ManifestError(
                .tooLarge, "The \(what) is \(value.count) characters; the limit is \(maxLength)", path: path)
        }
    }
}
