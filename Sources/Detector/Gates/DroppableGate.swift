/// A version gate the backend needs today, and when it can go, as an element of `flowmeter gates`' `gates`.
public struct DroppableGate: Hashable, Sendable, JSONRepresentable {
    /// The app.
    public var appID: String
    /// The type only some live versions render.
    public var widgetType: String
    /// The lowest live version that renders it above every live version that does not: the gate.
    public var minAppVersion: String
    /// Today's share of the app's installs on versions below `minAppVersion`, in `0...1`, four places.
    public var belowShare: Double
    /// The share per week of the window, oldest first (weeks without traffic left out).
    public var trend: [GateTrendPoint]
    /// When the share is forecast to fall under the threshold.
    public var forecast: GateForecast
    /// The live versions that render it, ordered by version; not part of the JSON.
    public var renderingVersions: [String]
    /// The live versions that do not, ordered by version; not part of the JSON.
    public var missingVersions: [String]

    /// Creates an entry.
    public init(
        appID: String, widgetType: String, minAppVersion: String, belowShare: Double, trend: [GateTrendPoint],
        forecast: GateForecast, renderingVersions: [String] = [], missingVersions: [String] = []
    ) {
        self.appID = appID
        self.widgetType = widgetType
        self.minAppVersion = minAppVersion
        self.belowShare = belowShare
        self.trend = trend
        self.forecast = forecast
        self.renderingVersions = renderingVersions
        self.missingVersions = missingVersions
    }

    /// `{"appID", "widgetType", "minAppVersion", "belowShare", "trend", "forecast": {"threshold", "date", "basis"}}`.
    public var jsonValue: JSONValue {
        .object([
            ("appID", .string(appID)),
            ("widgetType", .string(widgetType)),
            ("minAppVersion", .string(minAppVersion)),
            ("belowShare", .number(belowShare)),
            ("trend", .array(trend.map(\.jsonValue))),
            ("forecast", forecast.jsonValue),
        ])
    }
}
