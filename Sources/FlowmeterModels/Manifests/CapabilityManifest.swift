/// What one app build can render, uploaded from its build pipeline like debug symbols
/// (docs/api.md#capability-manifests).
///
/// One manifest per app id, app version, platform and build: the widget types the build registered, each with the
/// data keys its content requires and the ones it reads when present, and the section arrangements it lays out.
/// Nested keys are dotted paths, an array's elements marked `[]` (`items[].title`: every element of `items` needs a
/// `title`); a nested key only applies where its parent is present, so `header.title` required under an optional
/// `header` asks for a title only when there is a header.
///
/// JSON (``init(jsonBytes:limits:)``, ``jsonBytes()``):
/// `{"appID", "appVersion", "platform", "build", "types": {TYPE: {"required": [KEY], "optional": [KEY]}},
/// "arrangements": [NAME], "uploadedAt"}`; `appID`, `appVersion`, `platform` and `types` are required. Every name
/// (app id, version, platform, build, type, key, arrangement) is an identifier (``IdentifierRule``).
public struct CapabilityManifest: Hashable, Sendable {
    /// What one widget type's content reads from its `data`.
    public struct TypeShape: Hashable, Sendable {
        /// Keys the content decodes with `decode`: a payload without one is a `malformedPayload`. Sorted, distinct.
        public var required: [String]
        /// Keys the content decodes with `decodeIfPresent`. Sorted, distinct, none of them also required.
        public var optional: [String]

        /// Creates a shape; the lists are sorted and made distinct.
        public init(required: [String] = [], optional: [String] = []) {
            self.required = Array(Set(required)).sorted()
            self.optional = Array(Set(optional).subtracting(required)).sorted()
        }

        /// Every key the content reads, required or optional.
        public var allKeys: Set<String> { Set(required).union(optional) }
    }

    /// The app, as batches name it in `client.appID`.
    public var appID: String
    /// The app version, as batches name it in `client.appVersion`.
    public var appVersion: String
    /// The platform, as batches name it in `client.platform`.
    public var platform: String
    /// The build number, when the pipeline names one; part of what a new upload replaces.
    public var build: String?
    /// The registered widget types by name.
    public var types: [String: TypeShape]
    /// The section arrangements it knows (`vertical`, `grid`, …); nil when the manifest does not say.
    public var arrangements: [String]?
    /// When the collector (or the CLI) took the upload; a later upload of the same build replaces an earlier one.
    public var uploadedAt: Timestamp?

    /// Creates a manifest; `arrangements` is sorted and made distinct. Not validated: ``validated(limits:)`` is.
    public init(
        appID: String, appVersion: String, platform: String, build: String? = nil, types: [String: TypeShape],
        arrangements: [String]? = nil, uploadedAt: Timestamp? = nil
    ) {
        self.appID = appID
        self.appVersion = appVersion
        self.platform = platform
        self.build = build
        self.types = types
        self.arrangements = arrangements.map { Array(Set($0)).sorted() }
        self.uploadedAt = uploadedAt
    }

    /// What an upload replaces: the same app id, app version, platform and build (an absent build is `""`).
    public var identity: Identity {
        Identity(appID: appID, appVersion: appVersion, platform: platform, build: build ?? "")
    }

    /// The four fields that name one build's manifest.
    public struct Identity: Hashable, Sendable {
        /// The app.
        public var appID: String
        /// The app version.
        public var appVersion: String
        /// The platform.
        public var platform: String
        /// The build, `""` when the manifest names none.
        public var build: String

        /// Creates an identity.
        public init(appID: String, appVersion: String, platform: String, build: String) {
            self.appID = appID
            self.appVersion = appVersion
            self.platform = platform
            self.build = build
        }
    }
}
