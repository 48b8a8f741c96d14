// An app's build step that writes its capability manifest (docs/api.md#capability-manifests, docs/manifests.md).
//
//     swift run flowmeter-manifest-example --app-version 5.3.0 --build 5300 --platform ios --output manifest.json
//     flowmeter manifests upload manifest.json --collector https://diagnostics.example.com   # FLOWMETER_ADMIN_KEY set
//
// In an app, the content types below are the ones registered with Flow-UI; the list of registrations is the one the
// app already keeps. ManifestBuilder runs each content type's own `init(from:)` and records what it asks for:
// `decode` is a required key, `decodeIfPresent` an optional one, nested content a dotted path (`badges[].label`).
import FlowmeterModels
import Foundation

struct TitleBlock: Decodable {
    let title: String
    let subtitle: String?
}

struct Badge: Decodable {
    let label: String
    let color: String?
}

struct ImageTextCard: Decodable {
    let title: String
    let imageURL: URL?
    let kicker: String?
    let badges: [Badge]?
}

struct Carousel: Decodable {
    struct Item: Decodable {
        let title: String
        let imageURL: URL
    }
    let items: [Item]
    let autoplay: Bool?
}

/// A content type whose decoder checks values (an enum without `CaseIterable`): it says its keys itself.
struct Countdown: Decodable, ManifestKeysProviding {
    enum Style: String, Decodable { case compact, large }
    let endsAt: Date
    let style: Style?
    static let manifestShape = CapabilityManifest.TypeShape(required: ["endsAt"], optional: ["style"])
}

/// What the app registers: widget type → content type.
let registrations: [(type: String, content: any Decodable.Type)] = [
    ("title_block", TitleBlock.self), ("image_text_card", ImageTextCard.self), ("carousel_v2", Carousel.self),
    ("countdown_timer", Countdown.self),
]

/// `--name value` pairs from the command line.
var options: [String: String] = [:]
var words = CommandLine.arguments.dropFirst()[...]
while let word = words.popFirst() {
    guard word.hasPrefix("--"), let value = words.popFirst() else {
        FileHandle.standardError.write(
            Data(
                "usage: flowmeter-manifest-example [--app-id ID] [--app-version V] [--platform P] [--build B] [--output FILE]\n"
                    .utf8))
        exit(2)
    }
    options[String(word.dropFirst(2))] = value
}

var builder = ManifestBuilder(
    appID: options["app-id"] ?? "com.example.shop", appVersion: options["app-version"] ?? "5.3.0",
    platform: options["platform"] ?? "ios", build: options["build"])
do {
    for registration in registrations {
        try builder.register(registration.type, content: registration.content)
    }
    builder.arrangements = ["vertical", "horizontal", "grid"]
    let manifest = try builder.manifest()
    let bytes = Data(manifest.jsonBytes())
    if let output = options["output"] {
        try bytes.write(to: URL(fileURLWithPath: output))
        print("wrote \(output): \(manifest.types.count) types")
    } else {
        FileHandle.standardOutput.write(bytes + Data("\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
