import Detector

/// `--owners FILE` and `--team TEAM`: who owns each finding (docs/detector.md, "Owners"), and the filter to one team.
enum OwnerOptions {
    /// `--owners FILE`, for every command that reports or alerts on findings.
    static let owners = CommandOption.value(
        "owners", "FILE", help: "Owners file: rules mapping widget types or pages to teams (docs/detector.md).")
    /// `--team TEAM`, for the queries.
    static let team = CommandOption.value("team", "TEAM", help: "Only findings the --owners file gives this team.")

    /// The rules of `--owners`, nil when it is not given; a file that cannot be read or parsed is a usage error.
    static func rules(_ arguments: ParsedArguments) throws(CommandUsageError) -> OwnerRules? {
        guard let path = arguments.value("owners"), !path.isEmpty else { return nil }
        do {
            return try OwnerRules(contentsOf: path)
        } catch {
            throw CommandUsageError("--owners: \(error.message)", commandPath: arguments.commandPath)
        }
    }

    /// `--team`, nil when not given; a team without `--owners` is a usage error (nothing would say who owns what).
    static func team(_ arguments: ParsedArguments, rules: OwnerRules?) throws(CommandUsageError) -> String? {
        guard let team = arguments.value("team"), !team.isEmpty else { return nil }
        guard rules != nil else {
            throw CommandUsageError(
                "--team needs --owners FILE to say who owns what", commandPath: arguments.commandPath)
        }
        return team
    }

    /// Whether a finding of `appID`/`widgetType` whose events name `pages` passes the `--team` filter.
    static func keeps(
        _ team: String?, rules: OwnerRules?, appID: String, widgetType: String, pages: [String] = []
    ) -> Bool {
        guard let team else { return true }
        return rules?.team(appID: appID, widgetType: widgetType, pages: pages) == team
    }
}
