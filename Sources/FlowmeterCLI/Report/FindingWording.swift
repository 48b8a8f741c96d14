import Detector

/// The few phrases the CLI tables and the report share about findings, so they read the same everywhere.
enum FindingWording {
    /// `on 4 versions`, `on 5.2.1`, or `across versions` when no single version crossed the thresholds.
    static func reach(_ incident: Incident) -> String {
        switch incident.versions.count {
        case 0: return "across versions"
        case 1: return "on \(incident.versions[0].appVersion)"
        default: return "on \(incident.versions.count) versions"
        }
    }

    /// When a gate can go: the forecast day, `now`, or why there is no date.
    static func canDrop(_ forecast: GateForecast) -> String {
        switch forecast.basis {
        case .fit: return forecast.date.map(ReportFormatting.day) ?? "-"
        case .alreadyBelow: return "now"
        case .tooThin: return "too thin to forecast"
        case .notFalling: return "not falling"
        case .beyondHorizon: return "over a year away"
        }
    }

    /// How traffic contradicts a manifest, in a few words: `listed, yet reported unknown`.
    static func drift(_ drift: ManifestDrift) -> String {
        switch drift.reason {
        case .listedTypeUnknown: "listed, yet reported unknown"
        case .optionalKeyRequired: "'\(drift.key ?? "")' is optional, yet its absence breaks it"
        case .unlistedKeyRequired: "'\(drift.key ?? "")' is not listed, yet its absence breaks it"
        }
    }
}
