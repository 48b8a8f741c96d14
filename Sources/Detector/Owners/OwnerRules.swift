public import Foundation

/// Who owns a finding: rules from an owners file (`--owners FILE`) that map widget types, pages or apps to a team,
/// and a default team.
///
/// The file is JSON:
/// ```json
/// {"defaultTeam": "app-platform",
///  "rules": [{"widgetType": "hologram_*", "team": "immersive"},
///            {"page": "checkout*", "team": "payments"},
///            {"appID": "com.example.reader", "widgetType": "*", "team": "newsroom"}]}
/// ```
/// A rule names at least one of `widgetType`, `page` and `appID`, each a glob where `*` stands for any run of
/// characters (empty too) and everything else for itself, case-sensitively; a rule matches when every pattern it names
/// matches (`page` matches when any page of the finding does). The first matching rule wins, in file order, so put
/// narrow rules first. A finding no rule matches belongs to `defaultTeam`, or to nobody when the file names none.
public struct OwnerRules: Sendable, Hashable {
    /// One rule: patterns and the team they map to.
    public struct Rule: Sendable, Hashable, Codable {
        /// A glob over the widget type.
        public var widgetType: String?
        /// A glob over the page ids of the finding's sampled events.
        public var page: String?
        /// A glob over the app id.
        public var appID: String?
        /// The owning team.
        public var team: String

        /// Creates a rule.
        public init(widgetType: String? = nil, page: String? = nil, appID: String? = nil, team: String) {
            self.widgetType = widgetType
            self.page = page
            self.appID = appID
            self.team = team
        }

        /// Whether the rule matches a finding of `appID` and `widgetType` whose events name `pages`.
        public func matches(appID: String, widgetType: String, pages: [String]) -> Bool {
            if let pattern = self.widgetType, !Self.glob(pattern, matches: widgetType) { return false }
            if let pattern = self.appID, !Self.glob(pattern, matches: appID) { return false }
            if let pattern = page, !pages.contains(where: { Self.glob(pattern, matches: $0) }) { return false }
            return true
        }

        /// Whether `text` matches `pattern`, where `*` is any run of characters (greedy with backtracking; linear
        /// in practice for the short names of types and pages).
        public static func glob(_ pattern: String, matches text: String) -> Bool {
            let pattern = Array(pattern.unicodeScalars)
            let text = Array(text.unicodeScalars)
            var (p, t) = (0, 0)
            var star: Int?
            var resume = 0
            while t < text.count {
                if p < pattern.count && pattern[p] == "*" {
                    star = p
                    resume = t
                    p += 1
                } else if p < pattern.count && pattern[p] == text[t] {
                    p += 1
                    t += 1
                } else if let star {
                    p = star + 1
                    resume += 1
                    t = resume
                } else {
                    return false
                }
            }
            while p < pattern.count && pattern[p] == "*" { p += 1 }
            return p == pattern.count
        }
    }

    /// The rules, first match wins.
    public var rules: [Rule]
    /// The team of findings no rule matches; nil for nobody.
    public var defaultTeam: String?

    /// Creates rules.
    public init(rules: [Rule] = [], defaultTeam: String? = nil) {
        self.rules = rules
        self.defaultTeam = defaultTeam
    }

    /// Parses an owners file; throws ``DetectorError`` with code `invalidOwners` naming what is wrong.
    public init(json: Data) throws(DetectorError) {
        struct File: Decodable {
            var defaultTeam: String?
            var rules: [Rule]?
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch {
            throw DetectorError(.invalidOwners, "the owners file is not valid: \(error)")
        }
        for (index, rule) in (file.rules ?? []).enumerated() {
            guard rule.widgetType != nil || rule.page != nil || rule.appID != nil else {
                throw DetectorError(.invalidOwners, "owners rule \(index + 1) names no widgetType, page or appID")
            }
            guard !rule.team.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw DetectorError(.invalidOwners, "owners rule \(index + 1) has an empty team")
            }
        }
        self.init(rules: file.rules ?? [], defaultTeam: file.defaultTeam.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Reads and parses the owners file at `path`.
    public init(contentsOf path: String) throws(DetectorError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DetectorError(.invalidOwners, "no owners file at '\(path)'")
        }
        try self.init(json: data)
    }

    /// The team that owns a finding of `appID` and `widgetType` whose sampled events name `pages`.
    public func team(appID: String, widgetType: String, pages: [String] = []) -> String? {
        rules.first { $0.matches(appID: appID, widgetType: widgetType, pages: pages) }?.team ?? defaultTeam
    }

    /// Every team the rules name, default first, without repeats.
    public var teams: [String] {
        var teams: [String] = defaultTeam.map { [$0] } ?? []
        for rule in rules where !teams.contains(rule.team) { teams.append(rule.team) }
        return teams
    }
}
