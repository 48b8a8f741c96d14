public import Detector
public import FlowmeterModels
public import Rollups

/// The weekly schema-health report (`flowmeter report`): what one ISO week of release-build diagnostics says, compared
/// with the week before, and what to do about it.
///
/// Built by ``WeeklyReportBuilder`` from a rollup store; rendered by ``WeeklyReport/json``, ``WeeklyReport/markdown``
/// and ``WeeklyReport/html``. Every string that came from an app or a backend (types, messages, paths, page ids,
/// versions, deploy names) is data: the renderers escape it for their format. Debug builds never count.
public struct WeeklyReport: Sendable {
    /// The week reported on.
    public var week: ISOWeek
    /// The app the report is limited to; nil for every app.
    public var appID: String?
    /// When the report was computed.
    public var generatedAt: Timestamp
    /// How fresh the store was (`data complete up to …`), printed in the footer; nil prints nothing.
    public var freshness: String?
    /// Totals of the week.
    public var current: Summary
    /// Totals of the week before, for the week-over-week changes.
    public var previous: Summary
    /// Ungated types of this week and of the week before, each marked new, ongoing or resolved.
    public var ungated: [UngatedChange]
    /// Types whose first release occurrence ever (any kind) lies in the week, earliest first.
    public var newTypes: [NewType]
    /// This week's `malformedPayload` events by app and widget type, most events first.
    public var malformed: [MalformedGroup]
    /// This week's `duplicateID` events by app and page, most events first.
    public var duplicates: [DuplicatePage]
    /// Release app versions with traffic this week, by app, newest version first.
    public var versions: [VersionHealth]
    /// This week's `unknownType` events per day and type.
    public var unknownByDay: UnknownByDay
    /// Deploys that finished this week, oldest first, with the findings attributed to them.
    public var deploys: [DeployImpact]
    /// This week's spikes, earliest onset first.
    public var spikes: [Spike]
    /// This week's spikes grouped by cause, earliest onset first.
    public var incidents: [Incident]
    /// Version gates the backend needs as of the week's end, soonest droppable first ("Gates you can drop soon").
    public var gates: [DroppableGate]
    /// What to change, most urgent first (grouped by team in the renderings when an owners file was given).
    public var actions: [Action]
    /// Whether an owners file gave the actions their teams.
    public var hasOwners: Bool
    /// How many capability manifests the store holds for the report's apps; 0 leaves the manifests section out.
    public var manifestsChecked: Int
    /// Manifests the week's traffic contradicts ("Manifests out of date"), by app and version.
    public var manifestDrift: [ManifestDrift]
    /// Diagnostics one backend release raised where a sibling release serving the same versions at the same time did
    /// not (``CanaryComparison``): "Backend releases compared"; empty leaves the section out.
    public var canary: [CanaryComparison.Finding] = []
    /// Each canary finding's releases' diagnostics per 1,000 decodes on the finding's versions (`flowmeter matrix`'s
    /// per-release DIAG/1K, docs/cli.md): nil where a release has no attributed decodes there.
    public var canaryRates: [CanaryComparison.Finding: CanaryRates] = [:]

    /// The raising and the quiet release's diagnostics per 1,000 decodes on a canary finding's versions.
    public struct CanaryRates: Sendable, Hashable {
        public var raising: Double?
        public var quiet: Double?

        /// A rate as the report prints it: one decimal, `–` for none.
        static func text(_ value: Double?) -> String {
            value.map { String(format: "%.1f", $0) } ?? "–"
        }
    }
    /// `flowmeter check` approvals (`flowmeter report --approvals FILE`) expiring within 14 days of the report, or
    /// expired: "Check approvals expiring soon"; empty leaves the section out.
    public var expiringApprovals: [ExpiringApproval] = []

    /// A `flowmeter check` approval near or past its expiry date.
    public struct ExpiringApproval: Sendable, Hashable {
        public var widgetType: String
        public var kind: String?
        public var appID: String?
        public var key: String?
        public var owner: String
        public var reason: String
        /// The date as written in the approvals file.
        public var expires: String
        /// Whether it has expired: the finding fails `check` again.
        public var isExpired: Bool
    }

    /// Creates a report from its parts.
    public init(
        week: ISOWeek, appID: String?, generatedAt: Timestamp, current: Summary, previous: Summary,
        ungated: [UngatedChange], newTypes: [NewType], malformed: [MalformedGroup], duplicates: [DuplicatePage],
        versions: [VersionHealth], unknownByDay: UnknownByDay, deploys: [DeployImpact], spikes: [Spike],
        actions: [Action], incidents: [Incident] = [], gates: [DroppableGate] = [], hasOwners: Bool = false,
        manifestsChecked: Int = 0, manifestDrift: [ManifestDrift] = []
    ) {
        self.week = week
        self.appID = appID
        self.generatedAt = generatedAt
        self.current = current
        self.previous = previous
        self.ungated = ungated
        self.newTypes = newTypes
        self.malformed = malformed
        self.duplicates = duplicates
        self.versions = versions
        self.unknownByDay = unknownByDay
        self.deploys = deploys
        self.spikes = spikes
        self.actions = actions
        self.incidents = incidents
        self.gates = gates
        self.hasOwners = hasOwners
        self.manifestsChecked = manifestsChecked
        self.manifestDrift = manifestDrift
    }

    /// One week's totals over release builds.
    public struct Summary: Sendable, Hashable {
        /// The week's first instant.
        public var from: Timestamp
        /// The first instant after the week.
        public var to: Timestamp
        /// Diagnostic events per kind (raw kind name), every kind that occurred.
        public var eventsByKind: [String: Int64]
        /// Distinct installs that reported any diagnostic (HyperLogLog estimate).
        public var installsAffected: Int64
        /// Distinct installs that sent any batch (HyperLogLog estimate).
        public var installs: Int64
        /// Batches received.
        public var batches: Int64
        /// Batches without any diagnostic.
        public var cleanBatches: Int64
        /// Ungated types (the thresholds of docs/api.md#query-output) over the week.
        public var ungatedTypes: Int

        /// Creates a summary.
        public init(
            from: Timestamp, to: Timestamp, eventsByKind: [String: Int64], installsAffected: Int64, installs: Int64,
            batches: Int64, cleanBatches: Int64, ungatedTypes: Int
        ) {
            self.from = from
            self.to = to
            self.eventsByKind = eventsByKind
            self.installsAffected = installsAffected
            self.installs = installs
            self.batches = batches
            self.cleanBatches = cleanBatches
            self.ungatedTypes = ungatedTypes
        }

        /// Every diagnostic event of the week.
        public var totalEvents: Int64 { eventsByKind.values.reduce(0, +) }

        /// The share of batches with no diagnostic, nil without batches.
        public var decodeCleanRate: Double? { batches > 0 ? Double(cleanBatches) / Double(batches) : nil }

        /// Events of `kind`, zero when none occurred.
        public func events(_ kind: DiagnosticKind) -> Int64 { eventsByKind[kind.rawValue] ?? 0 }

        /// The kinds to show: the four named kinds, then any other kind that occurred in this or `other`, by name.
        public func kinds(alongside other: Summary) -> [String] {
            let named = [DiagnosticKind.unknownType, .malformedPayload, .droppedElement, .duplicateID].map(\.rawValue)
            let extra = Set(eventsByKind.keys).union(other.eventsByKind.keys).subtracting(named).sorted()
            return named + extra
        }
    }

    /// An ungated type and how it changed since last week.
    public struct UngatedChange: Sendable, Hashable {
        /// Whether the type is ungated this week only, both weeks, or last week only, or came back.
        public enum Status: String, Sendable, Hashable, CaseIterable {
            /// Ungated this week after a quiet stretch of `--regression-quiet` (48 h) without any report: the
            /// backend had gated or fixed it, and something undid that.
            case regressed
            /// Ungated this week, not last week.
            case new
            /// Ungated both weeks.
            case ongoing
            /// Ungated last week, not this week.
            case resolved
        }

        /// Regressed, new, ongoing or resolved.
        public var status: Status
        /// The finding: this week's for new and ongoing types, last week's for resolved ones.
        public var finding: UngatedType
        /// Release `unknownType` events of the type this week (below the thresholds for a resolved type).
        public var events: Int64
        /// Release `unknownType` events of the type last week.
        public var previousEvents: Int64

        /// Creates an entry.
        public init(status: Status, finding: UngatedType, events: Int64, previousEvents: Int64) {
            self.status = status
            self.finding = finding
            self.events = events
            self.previousEvents = previousEvents
        }
    }

    /// One widget type's malformed payloads, by normalized coding path.
    public struct MalformedGroup: Sendable, Hashable {
        /// The app.
        public var appID: String
        /// The widget type.
        public var widgetType: String
        /// Release `malformedPayload` events of the type this week.
        public var events: Int64
        /// Distinct installs that reported them.
        public var installs: Int64
        /// The app versions that reported them, oldest first.
        public var appVersions: [String]
        /// Every missing key named by the messages, by name.
        public var missingKeys: [String]
        /// The sampled paths, most events first.
        public var paths: [MalformedPath]

        /// Creates a group.
        public init(
            appID: String, widgetType: String, events: Int64, installs: Int64, appVersions: [String],
            missingKeys: [String], paths: [MalformedPath]
        ) {
            self.appID = appID
            self.widgetType = widgetType
            self.events = events
            self.installs = installs
            self.appVersions = appVersions
            self.missingKeys = missingKeys
            self.paths = paths
        }
    }

    /// One normalized coding path of a malformed widget type.
    public struct MalformedPath: Sendable, Hashable {
        /// The normalized path, such as `page.sections.Index *.widgets.Index *`; empty when events carried none.
        public var codingPath: String
        /// Events apportioned to the path: a minute's events split evenly over the distinct paths it sampled.
        public var events: Int64
        /// The distinct messages sampled at the path, by name (at most five).
        public var messages: [String]
        /// The missing keys those messages name, by name.
        public var missingKeys: [String]

        /// Creates a path entry.
        public init(codingPath: String, events: Int64, messages: [String], missingKeys: [String]) {
            self.codingPath = codingPath
            self.events = events
            self.messages = messages
            self.missingKeys = missingKeys
        }
    }

    /// One page's duplicate widget ids.
    public struct DuplicatePage: Sendable, Hashable {
        /// The app.
        public var appID: String
        /// The page id from the samples; nil when the events named no page.
        public var pageID: String?
        /// Events apportioned to the page: a minute's events split evenly over the pages it sampled.
        public var events: Int64
        /// The widget types whose ids collided, by name.
        public var widgetTypes: [String]
        /// Sampled messages, by name (at most three), such as `Duplicate id 'hero' renamed to 'hero-1'`.
        public var messages: [String]

        /// Creates a page entry.
        public init(appID: String, pageID: String?, events: Int64, widgetTypes: [String], messages: [String]) {
            self.appID = appID
            self.pageID = pageID
            self.events = events
            self.widgetTypes = widgetTypes
            self.messages = messages
        }
    }

    /// One release app version's adoption and decode health this week.
    public struct VersionHealth: Sendable, Hashable {
        /// The app.
        public var appID: String
        /// The version as sent.
        public var appVersion: String
        /// Distinct installs that sent a batch this week.
        public var installs: Int64
        /// The same last week; zero when the version had no traffic then.
        public var previousInstalls: Int64
        /// `installs` over the app's installs this week, in `0...1`.
        public var adoption: Double
        /// Batches received.
        public var batches: Int64
        /// Batches without any diagnostic.
        public var cleanBatches: Int64
        /// Diagnostic events of the version this week.
        public var events: Int64
        /// Events the version's SDK dropped on the device before sending (`clientReport`), this week.
        public var clientDiscarded: Int64

        /// Creates a version entry.
        public init(
            appID: String, appVersion: String, installs: Int64, previousInstalls: Int64, adoption: Double,
            batches: Int64, cleanBatches: Int64, events: Int64, clientDiscarded: Int64 = 0
        ) {
            self.appID = appID
            self.appVersion = appVersion
            self.installs = installs
            self.previousInstalls = previousInstalls
            self.adoption = adoption
            self.batches = batches
            self.cleanBatches = cleanBatches
            self.events = events
            self.clientDiscarded = clientDiscarded
        }

        /// The share of batches with no diagnostic, nil without batches.
        public var decodeCleanRate: Double? { batches > 0 ? Double(cleanBatches) / Double(batches) : nil }

        /// `12 (0.40%)`: the events the SDK dropped before sending and their share of the version's diagnostics; `0`
        /// without any. The tables' "Lost on device" cell.
        var onDeviceLossText: String {
            guard clientDiscarded > 0 else { return "0" }
            return ReportFormatting.count(clientDiscarded) + " (" + ReportFormatting.percent(onDeviceLoss, places: 2)
                + ")"
        }

        /// On-device loss: the share of the version's diagnostics its SDK dropped before sending
        /// (`clientDiscarded` over it plus the events received); nil when there were neither.
        public var onDeviceLoss: Double? {
            let total = Double(clientDiscarded) + Double(events)
            return total > 0 ? Double(clientDiscarded) / total : nil
        }
    }

    /// Daily `unknownType` events of the week's most frequent types.
    public struct UnknownByDay: Sendable, Hashable {
        /// The seven days' first instants.
        public var days: [Timestamp]
        /// The most frequent types (at most ``maxTypes``), then one entry with `widgetType` nil for the rest.
        public var types: [TypeDays]

        /// How many types get their own series before the rest are summed.
        public static let maxTypes = 6

        /// Creates the series.
        public init(days: [Timestamp], types: [TypeDays]) {
            self.days = days
            self.types = types
        }

        /// One type's events per day.
        public struct TypeDays: Sendable, Hashable {
            /// The app; nil for the summed rest.
            public var appID: String?
            /// The type; nil for the summed rest.
            public var widgetType: String?
            /// Events per day, one per element of `days`.
            public var events: [Int64]

            /// Creates a series.
            public init(appID: String?, widgetType: String?, events: [Int64]) {
                self.appID = appID
                self.widgetType = widgetType
                self.events = events
            }
        }
    }

    /// A deploy of the week and what the detector attributes to it.
    public struct DeployImpact: Sendable, Hashable {
        /// The deploy marker.
        public var deploy: DeployMarker
        /// Spikes whose suspect deploy is this one.
        public var spikes: [Spike]
        /// Ungated types (this week's) whose suspect deploy is this one.
        public var ungatedTypes: [UngatedType]
        /// Incidents whose suspect deploy is this one.
        public var incidents: [Incident]

        /// Creates an entry.
        public init(deploy: DeployMarker, spikes: [Spike], ungatedTypes: [UngatedType], incidents: [Incident] = []) {
            self.deploy = deploy
            self.spikes = spikes
            self.ungatedTypes = ungatedTypes
            self.incidents = incidents
        }
    }

    /// One concrete change to make, such as "gate `hologram_projector` at 5.3.0".
    public struct Action: Sendable, Hashable {
        /// What kind of change.
        public enum Kind: String, Sendable, Hashable {
            /// Send the type only to app versions from `minAppVersion` on.
            case gate
            /// Rename a misspelled type to the known one.
            case fixTypo
            /// Stop sending a type no app version renders.
            case stopSending
            /// Gate by registered types: no minimum version works.
            case gateByCapability
            /// Add a key the apps require to a type's payloads.
            case addMissingKey
            /// Fix another payload problem at a path.
            case fixPayload
            /// Make widget ids unique on a page.
            case dedupeIDs
        }

        /// A piece of the action's sentence.
        public enum Segment: Sendable, Hashable {
            /// Fixed wording of the report.
            case text(String)
            /// A value from the data shown as code: a type, key, path or page.
            case code(String)
            /// A value from the data shown as plain text: a version or count.
            case value(String)
        }

        /// What kind of change.
        public var kind: Kind
        /// The app to change it for.
        public var appID: String
        /// The widget type concerned.
        public var widgetType: String
        /// The events this week that the change would remove (how the actions are ordered).
        public var events: Int64
        /// The sentence, in pieces so each format can quote the data its own way.
        public var segments: [Segment]
        /// The team the owners file gives it; nil without one, or when no rule and no default names a team.
        public var team: String?
        /// The pages the finding behind it names (what owner rules on pages match).
        public var pages: [String]

        /// Creates an action.
        public init(
            kind: Kind, appID: String, widgetType: String, events: Int64, pages: [String] = [], segments: [Segment],
            team: String? = nil
        ) {
            self.kind = kind
            self.appID = appID
            self.widgetType = widgetType
            self.events = events
            self.segments = segments
            self.team = team
            self.pages = pages
        }

        /// The sentence as plain text with code in backticks, such as ``gate `hologram_projector` at 5.3.0``.
        public var text: String {
            segments.map { segment in
                switch segment {
                case .text(let text), .value(let text): return text
                case .code(let code): return "`" + code + "`"
                }
            }.joined()
        }
    }
}

extension WeeklyReport {
    /// The actions by team, teams in the order of their most urgent action, actions without a team last; one group
    /// with a nil team when the report has no owners.
    var actionsByTeam: [(team: String?, actions: [Action])] {
        guard hasOwners else { return [(nil, actions)] }
        var groups: [(team: String?, actions: [Action])] = []
        for action in actions {
            if let index = groups.firstIndex(where: { $0.team == action.team }) {
                groups[index].actions.append(action)
            } else {
                groups.append((action.team, [action]))
            }
        }
        return groups.filter { $0.team != nil } + groups.filter { $0.team == nil }
    }

    /// Whether renderings need an app column: the report is not for one app and its findings span more than one.
    var showsAppColumn: Bool {
        var apps = Set(versions.map(\.appID))
        apps.formUnion(ungated.map(\.finding.appID))
        apps.formUnion(malformed.map(\.appID))
        return appID == nil && apps.count > 1
    }
}
