import Foundation
import Testing

@testable import Lifecycle

@Suite struct ProcessorBudgetTests {
    @Test func cgroupV2QuotaRoundsUpToWholeProcessors() {
        #expect(ProcessorBudget.quota(cgroupV2: "150000 100000\n") == 2)
        #expect(ProcessorBudget.quota(cgroupV2: "100000 100000") == 1)
        #expect(ProcessorBudget.quota(cgroupV2: "50000 100000") == 1)
        #expect(ProcessorBudget.quota(cgroupV2: "max 100000\n") == nil)
        #expect(ProcessorBudget.quota(cgroupV2: "garbage") == nil)
    }

    @Test func cgroupV1QuotaOfMinusOneIsNoQuota() {
        #expect(ProcessorBudget.quota(microseconds: "-1\n", period: "100000\n") == nil)
        #expect(ProcessorBudget.quota(microseconds: "400000\n", period: "100000\n") == 4)
        #expect(ProcessorBudget.quota(microseconds: "1", period: "0") == nil)
    }

    @Test func readsTheQuotaFilesOfACgroupTree() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-cgroup-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("cpu"), withIntermediateDirectories: true)
        #expect(ProcessorBudget.cgroupQuota(root: root.path) == nil)
        try Data("250000\n".utf8).write(to: root.appendingPathComponent("cpu/cpu.cfs_quota_us"))
        try Data("100000\n".utf8).write(to: root.appendingPathComponent("cpu/cpu.cfs_period_us"))
        #expect(ProcessorBudget.cgroupQuota(root: root.path) == 3)
        try Data("100000 100000\n".utf8).write(to: root.appendingPathComponent("cpu.max"))
        #expect(ProcessorBudget.cgroupQuota(root: root.path) == 1, "cgroup v2 wins")
    }

    @Test func countsTheCPUsOfAKernelMask() {
        #expect(ProcessorBudget.cpuCount(mask: " 3") == 2)
        #expect(ProcessorBudget.cpuCount(mask: "\tff,00000001") == 9)
        #expect(ProcessorBudget.cpuCount(mask: "0") == nil)
        #expect(ProcessorBudget.cpuCount(mask: "zz") == nil)
    }

    @Test func theAffinityMaskBoundsTheBudget() throws {
        let online = ProcessInfo.processInfo.activeProcessorCount
        let affinity = try #require(ProcessorBudget.affinityCount())
        #expect(affinity >= 1 && affinity <= online)
        #expect(ProcessorBudget.available() <= affinity)
    }
}
