import FlowmeterModels
import FlowmeterRuntime
import Foundation
import RollupStore

extension DemoRun {
    /// Prints what `GET /v1/compatibility` answers for the shop's oldest iOS version in the store (the same index
    /// `serve` keeps in memory, built from the finished store), then `flowmeter matrix` over the demo's hours.
    func showCompatibilityAndMatrix(store: any RollupStore, storePath: String, since: String) async {
        let built = await Task.detached {
            let index = try? CompatibilityRefresh.index(
                from: store, configuration: CompatibilityConfiguration(), now: Timestamp(Date()))
            let versions =
                (try? store.manifests(appID: "com.example.shop"))?.filter { $0.platform == "ios" }.map(\.appVersion)
                ?? []
            return (index, versions.min { AppVersion($0) < AppVersion($1) })
        }.value
        if let index = built.0, let oldest = built.1,
            let answer = index.answer(
                for: .init(appID: "com.example.shop", platform: "ios", appVersion: oldest), build: nil)
        {
            Terminal.heading(
                "GET /v1/compatibility?appID=com.example.shop&platform=ios&appVersion=\(oldest)   "
                    + "(what a page backend asks before it sends a page)")
            print("    " + String(decoding: answer.body, as: UTF8.self))
            print("    ETag \(answer.etag), Cache-Control: max-age=300 (docs/compatibility.md)")
            print("")
        }
        Terminal.heading("flowmeter matrix --since \(since)   (backend release × app version)")
        _ = await query(["matrix", "--store", storePath, "--since", since, "--app", "com.example.shop"])
        print("")
    }
}
