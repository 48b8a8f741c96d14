public import FlowmeterWire

/// The seeded generator every test draws from: FlowmeterWire's ``SeededRandom`` (SplitMix64), whose whole sequence
/// follows from its seed, so generated test data is the same on every run and a failure reproduces.
///
/// One generator for the tests and the code they test; helpers a suite needs on top (a pick from a list, a chance, an
/// install hash) are extensions in that suite.
public typealias SeededGenerator = SeededRandom
