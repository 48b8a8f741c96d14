public import Logging

/// The collector's logger is the program's ``Logger``; the name stays for callers written before it had a target of
/// its own.
public typealias CollectorLogger = Logger
