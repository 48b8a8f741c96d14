import Testing

@testable import FlowmeterModels

@Suite struct AppVersionTests {
    @Test(arguments: [
        ("5.9.2", "5.10.0"), ("5.2.0", "5.2.1"), ("5.2", "5.2.1"), ("4.99.99", "5.0"), ("5.2.1 (5210)", "5.3.0"),
        ("", "0.0.1"), ("1.2.3-beta", "1.2.4"),
    ])
    func ordersNumericallyByComponent(lower: String, higher: String) {
        #expect(AppVersion(lower) < AppVersion(higher))
        #expect(!(AppVersion(higher) < AppVersion(lower)))
    }

    @Test func ignoresTrailingTextButKeepsTheString() {
        let version = AppVersion("5.2.1 (5210)")
        #expect(version.components == [5, 2, 1])
        #expect(version.string == "5.2.1 (5210)")
        #expect(version.ordersEqual(to: AppVersion("5.2.1")))
        #expect(AppVersion("5.2").ordersEqual(to: AppVersion("5.2.0")))
        #expect(version != AppVersion("5.2.1"))
    }

    @Test func sortsAListOfVersions() {
        let sorted = ["5.10.0", "5.9.2", "5.2.1 (5210)", "6.0", "5.2.0"].map(AppVersion.init).sorted().map(\.string)
        #expect(sorted == ["5.2.0", "5.2.1 (5210)", "5.9.2", "5.10.0", "6.0"])
    }

    @Test func survivesHugeComponents() {
        #expect(AppVersion("99999999999999999999999.1") > AppVersion("5.0"))
    }
}
