/// The version of this Flowmeter build: what `flowmeter --version` prints, `flowmeter_build_info` reports and the
/// SDK sends as `sdkVersion`. The one place it is written.
public let flowmeterVersion = "0.1.0"
