import Detector
import FlowmeterCLI
import FlowmeterModels
import Rollups
import Testing

@Suite struct ReportModelTests {
    static let now = Timestamp(rfc3339: "2026-12-01T09:00:00Z")!

    static func report(appID: String? = nil) throws -> WeeklyReport {
        let scenario = try ReportScenario.make()
        return try WeeklyReportBuilder().report(
            reader: scenario.store, week: ISOWeek(year: 2026, week: 48)!, appID: appID, now: now)
    }

    @Test(arguments: [
        ("2026-W48", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"),
        ("2026w01", "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z"),
        ("2026-W53", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"),
        ("2021-W01", "2021-01-04T00:00:00Z", "2021-01-11T00:00:00Z"),
        ("2020-W53", "2020-12-28T00:00:00Z", "2021-01-04T00:00:00Z"),
    ])
    func isoWeeksStartOnMonday(text: String, start: String, end: String) throws {
        let week = try ISOWeek(parsing: text)
        #expect(week.start.rfc3339String == start)
        #expect(week.end.rfc3339String == end)
        #expect(ISOWeek(containing: week.start) == week)
        #expect(ISOWeek(containing: Timestamp(secondsSinceEpoch: week.end.secondsSinceEpoch - 1)) == week)
    }

    @Test(arguments: [
        ("2026-48", "is not an ISO week"), ("W48", "is not an ISO week"), ("2026-W", "is not an ISO week"),
        ("2025-W53", "2025 has weeks 01 to 52"), ("2026-W00", "2026 has weeks 01 to 53"),
        ("26-W10", "is not an ISO week"),
    ])
    func invalidWeeksSayWhatIsWrong(text: String, message: String) {
        #expect {
            _ = try ISOWeek(parsing: text)
        } throws: { error in
            (error as? CommandUsageError)?.message.contains(message) == true
        }
    }

    @Test func defaultWeekIsTheLastCompleteOne() {
        #expect(ISOWeek.lastComplete(before: Self.now).description == "2026-W48")
        // Monday 00:00 starts W49, so W48 has just ended.
        #expect(ISOWeek.lastComplete(before: Timestamp(rfc3339: "2026-11-30T00:00:00Z")!).description == "2026-W48")
        #expect(ISOWeek.lastComplete(before: Timestamp(rfc3339: "2026-11-29T23:59:59Z")!).description == "2026-W47")
        #expect(ISOWeek.lastComplete(before: Timestamp(rfc3339: "2027-01-02T12:00:00Z")!).description == "2026-W52")
    }

    @Test func summaryComparesTheWeekWithTheOneBefore() throws {
        let report = try Self.report()
        #expect(report.week.description == "2026-W48")
        #expect(report.current.events(.unknownType) == 1200 + 30 + 3 + 50 + 22)
        #expect(report.current.events(.malformedPayload) == 30)
        #expect(report.current.events(.duplicateID) == 17)
        #expect(report.current.events(.droppedElement) == 7)
        #expect(report.previous.events(.unknownType) == 110)
        #expect(report.previous.events(.malformedPayload) == 10)
        #expect(report.current.batches == 2160)
        #expect(report.current.cleanBatches == 2052)
        #expect(report.current.decodeCleanRate == 0.95)
        #expect(report.previous.batches == 1200)
        #expect(report.current.installsAffected == 36)
        #expect(report.previous.installsAffected == 10)
        // HyperLogLog estimates: about 1.6% error.
        #expect(abs(report.current.installs - 200) <= 4)
        #expect(report.current.ungatedTypes == 4)
        #expect(report.previous.ungatedTypes == 2)
    }

    @Test func ungatedTypesAreNewOngoingOrResolved() throws {
        let report = try Self.report()
        let status = Dictionary(uniqueKeysWithValues: report.ungated.map { ($0.finding.widgetType, $0.status) })
        #expect(
            status == [
                "hologram_projector": .new, "imgae_text_card": .new, ReportScenario.hostileType: .new,
                "promo_banner_v2": .regressed, "countdown_timer": .resolved,
            ])
        #expect(report.ungated.map(\.status) == [.regressed, .new, .new, .new, .resolved])
        #expect(report.ungated.first?.finding.status == .regressed)
        let hologram = try #require(report.ungated.first { $0.status == .new })
        #expect(hologram.finding.widgetType == "hologram_projector")
        #expect(hologram.events == 1200)
        #expect(hologram.finding.suggestedMinAppVersion == "5.3.0")
        #expect(hologram.finding.suspectDeploy?.version == "2026.11.25-1")
        let resolved = try #require(report.ungated.last)
        #expect(resolved.events == 3 && resolved.previousEvents == 60)
        #expect(
            report.ungated.first { $0.finding.widgetType == "imgae_text_card" }?.finding.likelyTypoOf
                == "image_text_card")
        // The debug build's 500 events never count.
        #expect(report.versions.allSatisfy { $0.appVersion != "5.4.0" })
    }

    @Test func actionsSayWhatToChange() throws {
        let report = try Self.report()
        #expect(
            report.actions.map(\.text) == [
                "gate `hologram_projector` at 5.3.0",
                "fix typo `imgae_text_card` → `image_text_card`",
                "gate `promo_banner_v2` at 5.3.0",
                "stop sending `\(ReportScenario.hostileType)`: no app version renders it",
                "add missing key `imageURL` to `image_text_card` payloads",
                "fix `title_block` payloads at `page.header`: Expected String for 'title' but found number",
                "fix `\(ReportScenario.hostileType)` payloads at `page.sections.Index *`: \(ReportScenario.hostileMessage)",
                "make widget ids unique on page `home` (`image_text_card`)",
                "make widget ids unique on page `search` (`title_block`)",
                "make widget ids unique on page `\(ReportScenario.hostilePage)` (`title_block`)",
            ])
        #expect(
            report.actions.map(\.kind) == [
                .gate, .fixTypo, .gate, .stopSending, .addMissingKey, .fixPayload, .fixPayload, .dedupeIDs, .dedupeIDs,
                .dedupeIDs,
            ])
        #expect(report.actions.first?.events == 1200)
    }

    @Test func malformedPayloadsGroupByTypeAndNormalizedPath() throws {
        let report = try Self.report()
        #expect(report.malformed.map(\.widgetType) == ["image_text_card", "title_block", ReportScenario.hostileType])
        let image = try #require(report.malformed.first)
        #expect(image.events == 20)
        #expect(image.missingKeys == ["imageURL"])
        #expect(image.paths.map(\.codingPath) == ["page.sections.Index *.widgets.Index *"])
        #expect(image.paths.first?.events == 20)
        #expect(report.malformed[1].missingKeys == [])
    }

    @Test func duplicateIDsGroupByPage() throws {
        let report = try Self.report()
        #expect(report.duplicates.map(\.pageID) == ["home", "search", ReportScenario.hostilePage])
        #expect(report.duplicates.map(\.events) == [12, 4, 1])
        #expect(report.duplicates.first?.messages == ["Duplicate id 'hero' renamed to 'hero-1'"])
    }

    @Test func versionsShowAdoptionAndDecodeCleanRate() throws {
        let report = try Self.report()
        #expect(report.versions.map(\.appVersion) == ["5.3.0", "5.2.1"])
        let newer = try #require(report.versions.first)
        #expect(abs(newer.installs - 140) <= 3 && newer.previousInstalls == 20)
        #expect(abs(newer.adoption - 0.7) < 0.02)
        #expect(newer.decodeCleanRate == 1404.0 / 1440.0)
        #expect(report.versions.last?.decodeCleanRate == 0.9)
    }

    @Test func deploysCarryTheSpikesAndTypesAttributedToThem() throws {
        let report = try Self.report()
        #expect(report.deploys.map(\.deploy.id) == ["deploy-holo", "deploy-quiet"])
        let holo = try #require(report.deploys.first)
        #expect(!holo.spikes.isEmpty)
        #expect(holo.spikes.allSatisfy { $0.widgetType == "hologram_projector" })
        #expect(holo.ungatedTypes.map(\.widgetType) == ["hologram_projector"])
        #expect(report.deploys.last?.spikes.isEmpty == true)
        #expect(report.unknownByDay.days.count == 7)
        let perDay = report.unknownByDay.types.first { $0.widgetType == "hologram_projector" }?.events
        #expect(perDay == [0, 0, 1200, 0, 0, 0, 0])
    }

    @Test func missingKeysComeFromBothMessageStyles() {
        #expect(WeeklyReportBuilder.missingKeys(in: "Missing key 'imageURL'") == ["imageURL"])
        #expect(
            WeeklyReportBuilder.missingKeys(
                in: #"No value associated with key CodingKeys(stringValue: "title", intValue: nil) ("title")."#)
                == ["title"])
        #expect(WeeklyReportBuilder.missingKeys(in: "Expected String for 'title' but found number").isEmpty)
    }
}
