import FlowmeterModels
import FlowmeterReporter
import Foundation

#if canImport(SwiftUI) && canImport(UIKit)
    import SwiftUI

    /// The app: one reporter for the process, created at launch on a folder in Caches, and the adapter handed to
    /// the views that decode pages. Built only by an Apple toolchain; Linux parses it (scripts/portability-gate.py).
    @main
    struct ShopApp: App {
        let adapter: FlowmeterDiagnosticsAdapter?

        init() {
            let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
            // A second reporter on the folder (an app extension) throws ReporterError.directoryInUse: give each
            // process its own folder.
            adapter =
                (try? FlowmeterReporter(
                    configuration: ShopExample.configuration(
                        directory: caches.appendingPathComponent("flowmeter")))).map(FlowmeterDiagnosticsAdapter.init)
        }

        var body: some Scene {
            WindowGroup { HomePage(adapter: adapter) }
        }
    }

    /// A page that decodes its layout with Flow-UI and reports what Flow-UI could not render.
    struct HomePage: View {
        let adapter: FlowmeterDiagnosticsAdapter?
        @State private var rendered = 0

        var body: some View {
            Text("Rendered \(rendered) widgets")
                .task {
                    // Here Flow-UI decodes the page; its diagnostics and the response's release go to the adapter.
                    let diagnostics = ShopExample.sampleDiagnostics
                    adapter?.pageDecoded(diagnostics, pageID: "home", backendRelease: "page-api@2026.11.30-2")
                    rendered = 12 - diagnostics.count
                }
        }
    }
#else
    /// Where SwiftUI is missing (Linux): the same adapter and reporter, driven from the command line.
    /// `swift run flowmeter-app-example [collector URL]` records one page decode's diagnostics and flushes.
    @main
    enum ShopMain {
        static func main() async throws {
            let endpoint = CommandLine.arguments.dropFirst().first.flatMap(URL.init(string:))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowmeter-app-example")
            var configuration = ShopExample.configuration(directory: directory)
            if let endpoint { configuration.endpoint = endpoint }
            let reporter = try FlowmeterReporter(configuration: configuration)
            FlowmeterDiagnosticsAdapter(reporter: reporter).pageDecoded(
                ShopExample.sampleDiagnostics, pageID: "home", backendRelease: "page-api@2026.11.30-2")
            let outcome = await reporter.flush(timeoutInterval: 5)
            await reporter.close()
            print("flush: \(outcome)")
        }
    }
#endif

/// What both entry points share: the configuration and a page decode's diagnostics.
enum ShopExample {
    static func configuration(directory: URL) -> ReporterConfiguration {
        ReporterConfiguration(
            endpoint: URL(string: "http://127.0.0.1:8080")!, ingestKey: "k-shop-dev",
            client: ClientInfo(appID: "com.example.shop", appVersion: "5.2.1", platform: "ios", installID: nil),
            directory: directory)
    }

    /// Two diagnostics as Flow-UI reports them for one decode of the home page.
    static var sampleDiagnostics: [any FlowUIDiagnostic] {
        [
            Diagnostic(
                kindName: "unknownType", widgetType: "hologram_projector",
                codingPath: [Key("page"), Key("sections"), Key(0), Key("widgets"), Key(1)],
                message: "Unknown widget type 'hologram_projector'"),
            Diagnostic(
                kindName: "malformedPayload", widgetType: "product_card",
                codingPath: [Key("page"), Key("sections"), Key(2)],
                message: "Missing key 'title'"),
        ]
    }

    private struct Diagnostic: FlowUIDiagnostic {
        var kindName: String
        var widgetType: String?
        var codingPath: [any CodingKey]
        var message: String
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(_ string: String) { (stringValue, intValue) = (string, nil) }
        init(_ index: Int) { (stringValue, intValue) = ("Index \(index)", index) }
        init?(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { self.init(intValue) }
    }
}
