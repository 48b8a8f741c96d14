/// Builds an app build's manifest from the widget types it registers, learning each content type's keys from its
/// own `Decodable` conformance: what it reads with `decode` is required, what it reads with `decodeIfPresent` is
/// optional (Flow-UI's `WidgetContent` rule: "required new keys are a breaking change, not an override").
///
/// ```swift
/// import FlowmeterModels
///
/// struct ImageTextCard: Decodable {      // the app's content type, as registered with Flow-UI
///     let title: String                  // decode          → required "title"
///     let imageURL: URL                  // decode          → required "imageURL"
///     let kicker: String?                // decodeIfPresent → optional "kicker"
///     let badges: [Badge]?               // decodeIfPresent → optional "badges", and "badges[].label" required
/// }
///
/// var builder = ManifestBuilder(appID: "com.example.shop", appVersion: "5.3.0", platform: "ios", build: "5300")
/// try builder.register("image_text_card", content: ImageTextCard.self)
/// builder.register("spacer", required: [], optional: ["height"])   // or say the keys outright
/// builder.arrangements = ["vertical", "horizontal", "grid"]
/// try FileManager.default.createFile(atPath: "manifest.json", contents: Data(builder.manifest().jsonBytes()))
/// ```
///
/// Then the build pipeline uploads the file (docs/manifests.md): `flowmeter manifests upload manifest.json
/// --collector https://diagnostics.example.com` with the admin key in `FLOWMETER_ADMIN_KEY`, or
/// `curl -X POST …/v1/manifests -H "Authorization: Bearer $KEY" --data-binary @manifest.json`.
///
/// Learning keys runs the content type's `init(from:)` against a decoder that answers every `decode` with a
/// placeholder (`"placeholder"`, `1`, `false`, one array element, `URL`s, `Date`s and the like as leaves) and records
/// the keys asked for. A content type whose decoder rejects the placeholder (a `String`-backed enum, a validating
/// initializer) makes ``register(_:content:)`` throw; conform it to ``ManifestKeysProviding`` to say its keys
/// instead. Keys read only on some branch (`if container.contains(…)`) are learned as the placeholder path takes them.
public struct ManifestBuilder: Sendable {
    /// The manifest's app id.
    public var appID: String
    /// The manifest's app version.
    public var appVersion: String
    /// The manifest's platform.
    public var platform: String
    /// The manifest's build.
    public var build: String?
    /// The registered types so far.
    public var types: [String: CapabilityManifest.TypeShape] = [:]
    /// The section arrangements the build lays out; nil leaves them out of the manifest.
    public var arrangements: [String]?

    /// Starts an empty manifest for one build.
    public init(appID: String, appVersion: String, platform: String, build: String? = nil) {
        self.appID = appID
        self.appVersion = appVersion
        self.platform = platform
        self.build = build
    }

    /// Registers `type` with the keys its content type reads: ``ManifestKeysProviding/manifestShape`` when it
    /// conforms, else what its `init(from:)` asks for. Registering a type again replaces it.
    ///
    /// Throws ``ManifestError`` (`invalid`) naming the type when its decoder cannot be run to the end.
    public mutating func register<Content: Decodable>(_ type: String, content: Content.Type) throws(ManifestError) {
        types[type] = try Self.shape(of: content, type: type)
    }

    /// Registers `type` with the keys given.
    public mutating func register(_ type: String, required: [String], optional: [String] = []) {
        types[type] = CapabilityManifest.TypeShape(required: required, optional: optional)
    }

    /// The manifest, validated (identifiers, key paths, limits); throws the first ``ManifestError``.
    public func manifest(limits: ManifestLimits = ManifestLimits()) throws(ManifestError) -> CapabilityManifest {
        try CapabilityManifest(
            appID: appID, appVersion: appVersion, platform: platform, build: build, types: types,
            arrangements: arrangements
        ).validated(limits: limits)
    }

    /// The keys `content` reads; see ``ManifestBuilder``.
    public static func shape<Content: Decodable>(
        of content: Content.Type, type: String = "\(Content.self)"
    ) throws(ManifestError) -> CapabilityManifest.TypeShape {
        if let provided = content as? any ManifestKeysProviding.Type { return provided.manifestShape }
        let recording = KeyRecording()
        do {
            _ = try Content(from: KeyRecordingDecoder(recording: recording, prefix: nil, codingPath: []))
        } catch {
            throw ManifestError(
                .invalid,
                "Could not learn the keys of '\(type)' from \(Content.self): its decoder stopped with \(error); "
                    + "conform it to ManifestKeysProviding to give its keys")
        }
        return recording.shape
    }
}
