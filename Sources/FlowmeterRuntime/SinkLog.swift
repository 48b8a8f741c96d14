public import Logging
public import Sink

extension RollupSink {
    /// The sink's log lines through the program's logger, fields kept as fields.
    public static func log(to logger: Logger) -> Log {
        { level, message, fields in
            let pairs = fields.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
            let mapped: Logger.Level =
                switch level {
                case .info: .info
                case .warning: .warning
                case .error: .error
                }
            logger.log(mapped, message, fields: pairs)
        }
    }
}
