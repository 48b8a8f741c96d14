/// How option values are spelled, parsed in one place: durations, byte sizes.
enum OptionValues {
    /// `1048576`, `512KiB`, `1MiB`, `2GiB` (also `KB`/`MB`/`GB` as the same binary units).
    static func bytes(_ text: String) -> Int? {
        let units: [(String, Int)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1 << 10),
            ("MB", 1 << 20), ("GB", 1 << 30), ("B", 1),
        ]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            return Int(text.dropLast(suffix.count)).flatMap { $0 > 0 ? $0 * scale : nil }
        }
        return Int(text).flatMap { $0 > 0 ? $0 : nil }
    }

    /// `250ms`, `5s`, `10m`, `72h`, `2d`; a bare number is seconds.
    static func duration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value.isFinite else { return nil }
            return .milliseconds(Int64((value * scale * 1000).rounded()))
        }
        return Double(text).flatMap { $0 >= 0 && $0.isFinite ? .milliseconds(Int64(($0 * 1000).rounded())) : nil }
    }

    /// Whole seconds in a positive duration such as `90m`, `24h`, `7d`, `30s` or `2w`; nil otherwise.
    static func wholeSeconds(_ text: String) -> Int64? {
        let units: [(Character, Int64)] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86_400), ("w", 604_800)]
        guard let unit = text.last, let scale = units.first(where: { $0.0 == unit })?.1,
            let value = Int64(text.dropLast()), value > 0, value <= Int64.max / scale
        else { return nil }
        return value * scale
    }

    /// `0.5%` or `0.005`: a share in 0…1.
    static func share(_ text: String) -> Double? {
        let value = text.hasSuffix("%") ? Double(text.dropLast()).map { $0 / 100 } : Double(text)
        return value.flatMap { $0 >= 0 && $0 <= 1 ? $0 : nil }
    }
}
