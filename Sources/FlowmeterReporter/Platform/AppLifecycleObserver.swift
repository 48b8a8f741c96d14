#if canImport(UIKit) && !os(watchOS)
    import Foundation
    import UIKit

    /// Seals the open batch when the app resigns active, and uploads inside a background task when it enters the
    /// background; the task's expiry cancels the upload cleanly (the batch is kept, without penalty).
    ///
    /// UIKit only. This file is not built on Linux, where the project's tests run; keep it small.
    final class AppLifecycleObserver: @unchecked Sendable {
        private var observers: [any NSObjectProtocol] = []

        init(engine: ReporterEngine) {
            let center = NotificationCenter.default
            observers.append(
                center.addObserver(forName: UIApplication.willResignActiveNotification, object: nil, queue: nil) { _ in
                    Task { await engine.sealOpenBatch() }
                })
            observers.append(
                center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil) {
                    _ in
                    Task { @MainActor in BackgroundUpload.start(engine) }
                })
        }

        deinit {
            for observer in observers { NotificationCenter.default.removeObserver(observer) }
        }
    }

    /// One background task around one flush.
    @MainActor
    final class BackgroundUpload {
        private var identifier = UIBackgroundTaskIdentifier.invalid

        static func start(_ engine: ReporterEngine) {
            let upload = BackgroundUpload()
            let flush = Task { _ = await engine.flush(timeout: 25) }
            upload.identifier = UIApplication.shared.beginBackgroundTask(withName: "flowmeter-upload") {
                // Expiry: stop the flush and the request in flight, then give the time back.
                flush.cancel()
                engine.cancelCurrentUpload()
                Task { @MainActor in upload.end() }
            }
            Task { @MainActor in
                await flush.value
                upload.end()
            }
        }

        private func end() {
            guard identifier != .invalid else { return }
            UIApplication.shared.endBackgroundTask(identifier)
            identifier = .invalid
        }
    }
#endif
