import FlowmeterModels
import Foundation

extension DemoRun {
    /// Uploads every simulated version's capability manifest (both platforms) over `POST /v1/manifests`, as the apps'
    /// build pipelines would (docs/manifests.md).
    func uploadManifests(baseURL: URL) async {
        Terminal.heading("uploading capability manifests (POST /v1/manifests, as each app build's pipeline does)")
        let manifests = SimulatedManifests.all()
        var uploaded = 0
        var failure: String?
        for manifest in manifests {
            let answer = try? await ManifestUpload(collector: baseURL, adminKey: adminKey).send(manifest.jsonBytes())
            if answer?.status == 201 {
                uploaded += 1
            } else if failure == nil {
                failure = answer.map { "HTTP \($0.status) \($0.message)" } ?? "no answer"
            }
        }
        print("    \(uploaded) of \(manifests.count) manifests: every version of the 3 apps, ios and android, with the")
        print("    keys each widget type requires (image_text_card: title, imageURL)")
        if let failure { print("    " + Terminal.styled("an upload failed: \(failure)", .yellow)) }
        print("")
    }

    /// Runs `flowmeter check` on the page the malformed deploy serves (image_text_card without `imageURL`): what
    /// page-api's pipeline would have run before that deploy.
    func checkDroppedKey(storePath: String, since: String, truth: GroundTruth) async {
        let malformed = truth.malformed[0]
        let payload = directory + "/product_detail.json"
        let page = """
            {"page": {"id": "product_detail", "sections": [{"arrangement": "grid", "widgets": [
              {"type": "\(malformed.widgetType)", "id": "w1", "data": {"title": "Desk lamp", "kicker": "New"}},
              {"type": "rating_stars", "id": "w2", "data": {"value": 4.5}}]}]}}
            """
        _ = FileManager.default.createFile(atPath: payload, contents: Data(page.utf8))
        Terminal.heading(
            "flowmeter check product_detail.json   (page-api \(malformed.introducedBy.version)'s page, before it ships)"
        )
        _ = await query(["check", payload, "--store", storePath, "--since", since, "--app", malformed.appID])
        print(
            "\n    Run in page-api's pipeline before the deploy, its exit status 3 would have stopped the release that")
        print("    dropped `\(malformed.missingKey)`: every shop version's manifest requires it.")
        print("")
    }
}
