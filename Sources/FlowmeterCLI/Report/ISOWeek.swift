public import FlowmeterModels

/// An ISO 8601 week such as `2026-W48`: Monday 00:00Z up to the next Monday 00:00Z.
///
/// Week 1 of a year is the week holding its first Thursday (equivalently, January 4th); a year has 52 or 53 weeks.
/// The week-numbering year can differ from the calendar year near New Year (2026-12-31 is in 2026-W53, 2027-01-01
/// too).
public struct ISOWeek: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The ISO week-numbering year.
    public let year: Int
    /// The week number, `1...weeks(in: year)`.
    public let week: Int

    /// Creates a week; nil when `week` is not a week of `year` or the year is outside 1...9999.
    public init?(year: Int, week: Int) {
        guard (1...9999).contains(year), week >= 1, week <= Self.weeks(in: year) else { return nil }
        self.year = year
        self.week = week
    }

    /// Parses `2026-W48` (also `2026W48`, `2026-w48`); the usage error says what was wrong, for `commandPath`.
    public init(parsing text: String, commandPath: String = "flowmeter report") throws(CommandUsageError) {
        func invalid(_ message: String) -> CommandUsageError { CommandUsageError(message, commandPath: commandPath) }
        let upper = text.uppercased()
        let parts = upper.split(separator: "W", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw invalid("'\(text)' is not an ISO week such as 2026-W48") }
        var yearText = parts[0]
        if yearText.hasSuffix("-") { yearText = yearText.dropLast() }
        guard yearText.count == 4, let year = Int(yearText), parts[1].count == 2 || parts[1].count == 1,
            parts[1].allSatisfy(\.isASCII), let week = Int(parts[1])
        else { throw invalid("'\(text)' is not an ISO week such as 2026-W48") }
        guard year >= 1 else { throw invalid("'\(text)': the year must be 0001 or later") }
        guard let parsed = ISOWeek(year: year, week: week) else {
            throw invalid("'\(text)': \(year) has weeks 01 to \(Self.weeks(in: year))")
        }
        self = parsed
    }

    /// The week that contains `instant`.
    public init(containing instant: Timestamp) {
        let day = Self.floorDiv(instant.secondsSinceEpoch, 86_400)
        // Days since the epoch: 1970-01-01 was a Thursday; ISO weekday 1 = Monday.
        let weekday = Int(Self.floorMod(day + 3, 7)) + 1
        let thursday = day - Int64(weekday) + 4
        let year = Self.civilYear(ofDay: thursday)
        let week = Int((thursday - Self.mondayOfWeekOne(year)) / 7) + 1
        self.year = year
        self.week = week
    }

    /// The last week that has ended at `now`: the week before the one containing `now`.
    public static func lastComplete(before now: Timestamp) -> ISOWeek {
        ISOWeek(containing: now).previous
    }

    /// Monday 00:00Z, the first instant of the week.
    public var start: Timestamp {
        Timestamp(secondsSinceEpoch: (Self.mondayOfWeekOne(year) + Int64(week - 1) * 7) * 86_400)
    }

    /// The next Monday 00:00Z, the first instant after the week.
    public var end: Timestamp {
        Timestamp(secondsSinceEpoch: start.secondsSinceEpoch + 7 * 86_400)
    }

    /// The week before this one.
    public var previous: ISOWeek {
        ISOWeek(containing: Timestamp(secondsSinceEpoch: start.secondsSinceEpoch - 86_400))
    }

    /// `2026-W48`.
    public var description: String {
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + "-W" + (week < 10 ? "0" : "")
            + String(week)
    }

    public static func < (lhs: ISOWeek, rhs: ISOWeek) -> Bool { (lhs.year, lhs.week) < (rhs.year, rhs.week) }

    /// 52 or 53: a year has 53 weeks when December 28th (always in its last week) falls in week 53.
    public static func weeks(in year: Int) -> Int {
        let december28 = daysFromCivil(year: year, month: 12, day: 28)
        let weekday = Int(floorMod(december28 + 3, 7)) + 1
        let thursday = december28 - Int64(weekday) + 4
        return Int((thursday - mondayOfWeekOne(year)) / 7) + 1
    }

    /// Days since the epoch of the Monday that starts week 1 of `year` (the week holding January 4th).
    private static func mondayOfWeekOne(_ year: Int) -> Int64 {
        let january4 = daysFromCivil(year: year, month: 1, day: 4)
        let weekday = floorMod(january4 + 3, 7)  // 0 = Monday
        return january4 - weekday
    }

    /// Howard Hinnant's days-from-civil: days since 1970-01-01 of a proleptic Gregorian date.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let monthIndex = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthIndex + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The calendar year of a day since the epoch (the inverse of `daysFromCivil`, year only).
    private static func civilYear(ofDay day: Int64) -> Int {
        let z = day + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
    private static func floorMod(_ a: Int64, _ b: Int64) -> Int64 { a - floorDiv(a, b) * b }
}
