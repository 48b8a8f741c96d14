import Foundation

#if canImport(UIKit)
    import UIKit
#endif

/// Whether uploads may run now; checked before each upload. Flushes obey it too.
///
/// Being offline needs no check here: an upload without an answer is kept and retried with backoff.
public struct UploadConditions: Sendable {
    /// Answers whether an upload may start now.
    public var allowsUpload: @Sendable () async -> Bool

    /// Creates conditions from a check.
    public init(_ allowsUpload: @escaping @Sendable () async -> Bool) {
        self.allowsUpload = allowsUpload
    }

    /// Uploads whenever there is work.
    public static let always = UploadConditions { true }

    /// The platform default. On iOS and iPadOS: not in Low Power Mode and not below 10 % battery, unless the
    /// device is charging. Elsewhere: always.
    public static var standard: UploadConditions {
        #if canImport(UIKit) && !os(watchOS)
            return UploadConditions { await DeviceState.allowsUpload(minimumBattery: 0.1) }
        #else
            return .always
        #endif
    }
}

#if canImport(UIKit) && !os(watchOS)
    /// Battery and power state, read on the main actor as UIKit requires. Not built on this Linux machine.
    @MainActor
    enum DeviceState {
        static func allowsUpload(minimumBattery: Float) -> Bool {
            let device = UIDevice.current
            if !device.isBatteryMonitoringEnabled { device.isBatteryMonitoringEnabled = true }
            let charging = device.batteryState == .charging || device.batteryState == .full
            if charging { return true }
            if ProcessInfo.processInfo.isLowPowerModeEnabled { return false }
            // -1 means unknown (the simulator): do not hold uploads back on a guess.
            return device.batteryLevel < 0 || device.batteryLevel >= minimumBattery
        }
    }
#endif
