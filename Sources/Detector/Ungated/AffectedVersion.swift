/// One app version that reports an ungated type, as an element of docs/api.md#query-output's `affectedVersions`.
public struct AffectedVersion: Hashable, Sendable, JSONRepresentable {
    /// The app version as the app sent it.
    public var appVersion: String
    /// Release-build `unknownType` events for the type from this version in the window.
    public var events: Int64
    /// Distinct installs of this version that reported the type (a HyperLogLog estimate, about 1.6% error).
    public var installs: Int64
    /// `installs` divided by this version's distinct installs in the window, in `0...1`, rounded to four places.
    public var installShare: Double

    /// Creates an entry.
    public init(appVersion: String, events: Int64, installs: Int64, installShare: Double) {
        self.appVersion = appVersion
        self.events = events
        self.installs = installs
        self.installShare = installShare
    }

    /// `{"appVersion", "events", "installs", "installShare"}`.
    public var jsonValue: JSONValue {
        .object([
            ("appVersion", .string(appVersion)),
            ("events", .integer(events)),
            ("installs", .integer(installs)),
            ("installShare", .number(installShare)),
        ])
    }
}
