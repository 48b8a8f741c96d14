import Collector
import Detector
import FlowmeterRuntime
import RollupStore
import Sink

/// The defaults the options show in help and start from, read from the configuration types that state them, so each
/// default is written once (in its configuration type) and the help text is rendered from there.
enum OptionDefaults {
    /// The collector's settings.
    static let collector = CollectorConfiguration(keys: .none)
    /// `flowmeter serve`'s settings around the collector.
    static let serve = ServeConfiguration(collector: collector)
    /// A sink's settings (`sink`, `serve`'s in-process sink, `store rebuild`).
    static let sink = RollupSinkConfiguration.defaults
    /// What a store keeps.
    static let retention = RetentionPolicy()
    /// `flowmeter watch`'s settings (the store's URL aside).
    static let watch = WatchConfiguration(storeURL: "")
    /// The ungated-type finder's thresholds (`ungated`, `watch`, `serve`, `report`).
    static let ungated = UngatedTypeFinder.Configuration()
    /// The spool directory `flowmeter serve` uses unless `--spool` names another (or `none`), and `flowmeter spool`
    /// reads.
    static let spoolDirectory = "flowmeter-spool"
    /// The disk spool's settings.
    static let spool = CollectorConfiguration.DiskSpool(directory: spoolDirectory)

    /// A byte count as an option spells it: `1GiB`, `8MiB`, `16KiB`, or the plain number when no unit divides it.
    static func bytes(_ count: Int) -> String {
        for (suffix, scale) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where count >= scale && count % scale == 0 {
            return "\(count / scale)\(suffix)"
        }
        return String(count)
    }

    /// A duration as an option spells it, in `unit` (`ms`, `s`, `m`, `h` or `d`), or else in the largest of `ms`,
    /// `s`, `m` and `h` that gives a whole number: `5ms`, `30s`, `10m`, `72h`.
    static func duration(_ duration: Duration, unit: String? = nil) -> String {
        let (seconds, attoseconds) = duration.components
        return milliseconds(seconds * 1000 + attoseconds / 1_000_000_000_000_000, unit: unit)
    }

    /// Whole seconds as an option spells them (see ``duration(_:unit:)``): `14d` in days.
    static func duration(seconds: Int64, unit: String? = nil) -> String {
        milliseconds(seconds * 1000, unit: unit)
    }

    private static let units: [(String, Int64)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1),
    ]

    private static func milliseconds(_ total: Int64, unit: String?) -> String {
        if let unit, let scale = units.first(where: { $0.0 == unit })?.1 { return "\(total / scale)\(unit)" }
        for (suffix, scale) in units.dropFirst() where total >= scale && total % scale == 0 {
            return "\(total / scale)\(suffix)"
        }
        return "\(total)ms"
    }
}
